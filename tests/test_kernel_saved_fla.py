"""``--implementation fla``: the saved tensors of flash-linear-attention's chunk_gated_delta_rule and
causal-conv1d's causal_conv1d_fn, read from the source (fla-org/flash-linear-attention bc3b101d,
Dao-AILab/causal-conv1d 0d2252d1), not measured -- the kernels need a GPU.

The oracle is hand-worked from the ``ctx.save_for_backward`` lists and the shapes and dtypes their
allocations give, independent of the engine:

* ``CausalConv1dFn`` (causal_conv1d_interface.py line 59): x, (B, 2·H_k·d_k + H·d_v, T) at the
  activation dtype; the SiLU's output is not kept (recomputed);
* ``ChunkGatedDeltaRuleFunction`` (fla/ops/gated_delta_rule/chunk.py lines 310-326): q and k after
  l2norm_fwd (B, T, H_k, d_k) at the input's dtype and their rstd (B·T·H_k,) fp32
  (fla/modules/l2norm.py lines 157, 168); v's contiguous copy (B, T, H, d_v); g after
  chunk_local_cumsum (B, T, H) fp32 (fla/ops/utils/cumsum.py line 434); beta (B, T, H), saved as
  beta_raw and beta, one tensor; A (B, T, H, 64) at k's dtype (chunk_fwd.py line 385);
* transformers' gate ops around it (modeling_qwen3_next.py, ``Qwen3NextGatedDeltaNet.forward``):
  sigmoid keeps its output (the kernel's beta), softplus its fp32 input, the product its fp32
  softplus(·) operand; OLMo-Hybrid's β·2 (linear_allow_neg_eigval) leaves the sigmoid's output as a
  tensor of its own.

Everything else (norms, projections, the gated RMSNorm, attention layers, experts, the loss) keeps
what the ``fused`` rule says, and ``fused`` and ``hf-eager`` are unchanged by the new name.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

import symgpt

ACT = 2  # bf16
KERNEL_NODES = ("/attention/conv1d", "/attention/conv_act", "/attention/delta_rule")

QWEN3_NEXT = dict(model_type="qwen3_next", vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=8, linear_num_key_heads=2,
                  linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=6,
                  linear_conv_kernel_dim=3, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                  shared_expert_intermediate_size=12)
OLMO_HYBRID = dict(model_type="olmo_hybrid", vocab_size=64, hidden_size=32, intermediate_size=40, num_hidden_layers=5,
                   num_attention_heads=4, num_key_value_heads=2, linear_num_key_heads=2, linear_num_value_heads=4,
                   linear_key_head_dim=8, linear_value_head_dim=6, linear_conv_kernel_dim=3)


def _load(config, tmp_path, **bound):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return symgpt.load(str(path), **bound)


def _entries(model, impl, values):
    q = model.quantity("memory.activations", implementation=impl, precision="bf16")
    bound = {**{str(k): v for k, v in q.bindings.items()}, **values}
    at = {p: int(sympy.sympify(e).xreplace({s: bound[s.name] for s in sympy.sympify(e).free_symbols}))
          for p, e in q.breakdown}
    return at, q


def _split(model, impl, values):
    at, q = _entries(model, impl, values)
    kernel = sum(v for p, v in at.items() if p.endswith(KERNEL_NODES))
    rest = {p: v for p, v in at.items() if not p.endswith(KERNEL_NODES)}
    return kernel, rest, q


def _gdn_per_layer(b, t, hk, dk, h, dv, doubled=False):
    """One Gated DeltaNet layer's kernel tensors, in bytes, from the save_for_backward lists."""
    conv = b * t * (2 * hk * dk + h * dv) * ACT      # CausalConv1dFn: x
    qk = 2 * (b * t * hk * dk * ACT                 # q, k after l2norm_fwd, at the input's dtype
              + b * t * hk * 4)                     # their rstd, fp32
    v = b * t * h * dv * ACT                        # v's contiguous copy
    g = b * t * h * 4                               # chunk_local_cumsum, fp32
    beta = b * t * h * ACT                          # beta_raw is beta: one tensor
    a = b * t * h * 64 * ACT                        # A, (B, T, H, 64) at k's dtype
    gate = 2 * b * t * h * 4                        # softplus's fp32 input, the product's fp32 operand
    sigmoid = b * t * h * ACT if doubled else 0     # β·2: the sigmoid's output besides
    return conv + qk + v + g + beta + a + gate + sigmoid


def test_qwen3_next_hand_worked(tmp_path):
    m = _load(QWEN3_NEXT, tmp_path)
    values = {"B": 2, "T": 100}  # T not a multiple of 64: A is (B, T, H, 64), not padded
    kernel, rest, q = _split(m, "fla", values)
    linear = int(m.sizes["L_lin"])
    assert linear == 3
    assert kernel == linear * _gdn_per_layer(2, 100, 2, 8, 4, 6)
    _, fused_rest, _ = _split(m, "fused", values)
    assert rest == fused_rest
    assert any("read from the source, not measured" in n for n in q.notes)
    assert any("bc3b101d" in n and "0d2252d1" in n for n in q.notes)


@pytest.mark.parametrize("doubled", [True, False])
def test_olmo_hybrid_doubled_beta(doubled, tmp_path):
    m = _load(dict(OLMO_HYBRID, linear_allow_neg_eigval=doubled), tmp_path)
    assert m.flags["gdn_beta_doubled"] is doubled
    values = {"B": 3, "T": 64}
    kernel, rest, _ = _split(m, "fla", values)
    linear = int(m.sizes["L_lin"])
    assert kernel == linear * _gdn_per_layer(3, 64, 2, 8, 4, 6, doubled)
    _, fused_rest, _ = _split(m, "fused", values)
    assert rest == fused_rest


def test_lfm2_short_conv_keeps_its_input():
    """LFM2's causal_conv1d_fn without an activation keeps x = B·x (B, d, T): the fused rule's own."""
    m = symgpt.load("lfm2-1.2b")
    values = {"B": 1, "T": 4096}
    at, q = _entries(m, "fla", values)
    fused, _ = _entries(m, "fused", values)
    assert at == fused
    assert int(m.sizes["L_conv"]) == 10  # the config's layer_types: 10 short-convolution layers of 16
    assert at["conv_blocks/conv/conv1d"] == 10 * 1 * 4096 * 2048 * ACT
    assert any("implementation fla" in n for n in q.notes)


def test_reference_paths_unchanged_by_the_name(tmp_path):
    """fused and hf-eager (transformers' PyTorch path) answer as before: the flag OLMo-Hybrid's β
    sets and the new name change nothing outside --implementation fla."""
    on = _load(dict(OLMO_HYBRID, linear_allow_neg_eigval=True), tmp_path)
    off = _load(dict(OLMO_HYBRID, linear_allow_neg_eigval=False), tmp_path)
    for impl in ("fused", "hf-eager"):
        a = on.quantity("memory.activations", implementation=impl, precision="bf16")
        b = off.quantity("memory.activations", implementation=impl, precision="bf16")
        assert sympy.simplify(a.expr - b.expr) == 0 and a.breakdown == b.breakdown
    for q in ("params", "flops.forward"):
        assert sympy.simplify(on.quantity(q).expr - off.quantity(q).expr) == 0
    from symgpt.ops.base import Context
    from symgpt.ops.delta import GatedDeltaRule
    op = GatedDeltaRule(2, 4, 8, 6, 64)
    shapes = ((2, 5, 16), (2, 5, 16), (2, 5, 24), (2, 5, 4), (2, 5, 4))
    for impl in ("fused", "hf-eager"):
        kept = op.saved(shapes, (2, 5, 24), Context(implementation=impl))
        assert [s.role for s in kept] == ["q", "k", "v", "a", "b", "chunk_states"]


def test_kimi_linear_chunk_kda_hand_worked():
    """ChunkKDAFunction (fla/ops/kda/chunk.py lines 103-107) and KimiLinearForgetGate's tensors, H = 32,
    d_k = d_v = 128, one layer per linear-attention layer."""
    m = symgpt.load("kimi-linear-48b-a3b")
    b, t, h, dk = 1, 100, 32, 128
    values = {"B": b, "T": t}
    kernel, rest, q = _split(m, "fla", values)
    w = h * dk
    conv = b * t * 3 * w * ACT                      # CausalConv1dFn: x = [q, k, v]
    qk = 2 * (b * t * w * ACT + b * t * h * 4)      # q, k after l2norm_fwd; their fp32 rstd
    v = b * t * w * ACT                             # v's contiguous copy
    g = 2 * b * t * w * 4                           # g's chunk-local cumsum and g as passed, fp32
    beta = b * t * h * ACT                          # sigmoid's output, the kernel's beta_raw and beta
    a = 2 * b * t * h * 64 * ACT                    # Aqk and Akk
    gate = 3 * b * t * w * 4 + b * t * w * 1        # exp(g), 1 + exp(g), softplus(g) fp32; g > 20 bool
    layers = int(m.sizes["L_lin"])
    assert kernel == layers * (conv + qk + v + g + beta + a + gate)
    _, fused_rest, _ = _split(m, "fused", values)
    assert rest == fused_rest
    assert any("ChunkKDAFunction" in n for n in q.notes)


@pytest.mark.parametrize("name, why", [
    ("gpt2-small", "has none"),
    ("mamba-130m", "is not one whose"),            # mamba-ssm's Functions: --implementation mamba-ssm
    ("jamba-1.5-mini", "is not one whose"),
    (str(Path(__file__).parent / "configs" / "zoo" / "bailing_hybrid.json"), "is not one whose"),  # Ling 3's KDA
])
def test_refusals_are_one_line(name, why):
    r = subprocess.run([sys.executable, "-m", "symgpt", "memory", name, "--implementation", "fla"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symgpt: error: ") and why in lines[0]
