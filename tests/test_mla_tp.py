"""Multi-latent attention under tensor parallelism: the latent's producing ops are replicated.

Every real implementation keeps an MLA layer's low-rank down-projections whole on each rank:
vLLM's ``DeepseekV2Attention`` (vllm/model_executor/models/deepseek_v2.py) builds ``q_a_proj`` and
``kv_a_proj_with_mqa`` as ``ReplicatedLinear``, ``q_b_proj`` and ``kv_b_proj`` as
``ColumnParallelLinear`` and ``o_proj`` as ``RowParallelLinear``; Megatron-Core's
``MLASelfAttention`` (megatron/core/transformer/multi_latent_attention.py) builds
``linear_q_down_proj`` and ``linear_kv_down_proj`` with ``parallel_mode="duplicated"``.

Oracles: hand arithmetic from the DeepSeek-V2 paper's dimensions (Liu et al. 2024, Sec. 3.1 and
Appendix: d = 5120, d'_c = 1536, d_c = 512, d^R_h = 64, n_h = 128, d_h = 128, L = 60) for the
FLOPs and weights a rank computes and holds; the parameters of transformers' own
``DeepseekV2ForCausalLM`` (deepseek-v2-lite's config, meta device) grouped as vLLM shards them;
the saved tensors' shapes written out by hand.
"""

import json
from pathlib import Path

import pytest
import sympy

import symgpt
from oracles.measure import _hf_model
from symgpt.graph import roles
from symgpt.derive.memory_activations import saved_list
from symgpt.derive.tensor_parallel import replicated, tp_region

CONFIGS = Path(__file__).parent / "configs"

#: DeepSeek-V2 (the paper's full model): hidden size, query and KV compression, rotary head
#: dimension, heads, per-head no-position and value dimensions, layers
D, RQ, RC, ROPE, H, NOPE, V, L = 5120, 1536, 512, 64, 128, 128, 128, 60
#: the roles of an MLA layer's down-projection path: the latents, their norms, the rotary key
MLA = {roles.QUERY_DOWN, roles.QUERY_LATENT_NORM, roles.KV_DOWN, roles.KV_DOWN_LATENT, roles.KV_LATENT,
       roles.KV_DOWN_ROPE, roles.KEY_ROPE_HEAD, roles.KEY_ROPE}


def _v2():
    """DeepSeek-V2's attention sizes on the deepseek-v3 preset (MLA with a query compression)."""
    return symgpt.load("deepseek-v3", d=D, h=H, L=L, B=1, T=4096, q_lora_rank=RQ, kv_lora_rank=RC,
                       qk_rope_dim=ROPE, qk_nope_dim=NOPE, v_head_dim=V)


def _by_projection(m, name, **options):
    """The named quantity's parts summed per projection (q_a, q_b, kv_a, kv_b), over every layer."""
    q = m.quantity(name, **options)
    out = {}
    for path, e in q.breakdown:
        for proj in ("q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "q_a_layernorm",
                     "kv_a_layernorm"):
            if path.endswith("attention/" + proj):
                out[proj] = out.get(proj, 0) + m.value(e)
    return out


def test_prefill_flops_per_rank_down_projections_whole_up_projections_quartered():
    m = _v2()
    B, T = 1, 4096
    one = _by_projection(m, "inference.prefill.flops", chips=1)
    four = _by_projection(m, "inference.prefill.flops", chips=4)
    # 2 FLOPs per multiply-add, every token, every layer
    assert one["q_a_proj"] == 2 * B * T * D * RQ * L
    assert one["kv_a_proj_with_mqa"] == 2 * B * T * D * (RC + ROPE) * L
    assert one["q_b_proj"] == 2 * B * T * RQ * H * (NOPE + ROPE) * L
    assert one["kv_b_proj"] == 2 * B * T * RC * H * (NOPE + V) * L
    # replicated: every rank computes the whole down-projection
    assert four["q_a_proj"] == one["q_a_proj"]
    assert four["kv_a_proj_with_mqa"] == one["kv_a_proj_with_mqa"]
    # column-parallel: a quarter of the heads on each of 4 ranks
    assert four["q_b_proj"] == sympy.Rational(2 * B * T * RQ * H * (NOPE + ROPE) * L, 4)
    assert four["kv_b_proj"] == sympy.Rational(2 * B * T * RC * H * (NOPE + V) * L, 4)


def test_decode_bytes_and_weights_per_rank_hold_the_down_projections_whole():
    m = _v2()
    w = _by_projection(m, "inference.weights", chips=4)    # 16-bit weights: 2 bytes each
    assert w["q_a_proj"] == 2 * D * RQ * L
    assert w["kv_a_proj_with_mqa"] == 2 * D * (RC + ROPE) * L
    assert w["q_a_layernorm"] == 2 * RQ * L and w["kv_a_layernorm"] == 2 * RC * L
    assert w["q_b_proj"] == sympy.Rational(2 * RQ * H * (NOPE + ROPE) * L, 4)
    assert w["kv_b_proj"] == sympy.Rational(2 * RC * H * (NOPE + V) * L, 4)
    # a decode step of one token reads each weight once: whole down-projections, plus the token's
    # input (B·d) and output at 2 bytes
    b = _by_projection(m, "inference.decode.bytes", chips=4)
    assert b["q_a_proj"] == 2 * (D * RQ + D + RQ) * L
    assert b["kv_a_proj_with_mqa"] == 2 * (D * (RC + ROPE) + D + RC + ROPE) * L


def _hf_weights_per_rank(cfg, tp):
    """Parameters per rank of transformers' model, sharded as vLLM's DeepseekV2 shards them:
    the down-projections, every norm and the router replicated (whole); the token table and LM
    head (vocabulary-parallel), q_proj / q_b_proj / kv_b_proj (column), o_proj (row), and the
    dense, shared and routed experts' projections (column and row) divided tp ways."""
    model = _hf_model(cfg)
    whole = ("q_a_proj.", "kv_a_proj_with_mqa.", "layernorm.", "model.norm.", "mlp.gate.weight",
             "e_score_correction_bias")
    total = sympy.Integer(0)
    for name, p in model.named_parameters():
        n = p.numel()
        total += n if any(k in name for k in whole) else sympy.Rational(n, tp)
    return total


def test_training_weights_per_rank_of_deepseek_v2_lite_match_transformers_at_tp_2():
    cfg = json.loads((CONFIGS / "deepseek-v2-lite.json").read_text())
    m = symgpt.load(CONFIGS / "deepseek-v2-lite.json")
    got = m.value(m.quantity("memory.weights", tp=2, precision="fp32").expr) / 4
    assert got == _hf_weights_per_rank(cfg, 2)
    # the same split for inference: 16-bit weights on each of 2 devices
    assert m.value(m.quantity("inference.weights", chips=2).expr) == 2 * _hf_weights_per_rank(cfg, 2)


def test_the_tensor_parallel_region_holds_no_latent():
    m = _v2()
    arch = m.arch
    region = tp_region(arch)
    assert not [n for n in region if arch.role(n) in roles.TP_REPLICATED]
    for role in (roles.QUERY_UP, roles.KV_UP, roles.SCORES, roles.VALUES):
        assert set(arch.find(role)) <= region
    # replicated: the down-projection path and the router (by role)
    assert {arch.role(n) for n in arch.order if replicated(arch, n)} == MLA | {
        roles.ROUTER, roles.ROUTER_SOFTMAX, roles.TOP_K}


def test_saved_latents_are_whole_per_rank_heads_split():
    m = symgpt.load("deepseek-v3", L=4)
    saved = {(e[0].split("/", 1)[1], e[1]): e for e in saved_list(m, tp=4) if e[0].startswith("blocks/attention/")}
    B, T, h = sympy.symbols("B T h", positive=True, integer=True)
    # the column-parallel up-projections save their input: the normed latents, (B, T, r), whole
    for node, r in (("attention/q_b_proj", 1536), ("attention/kv_b_proj", 512)):
        e = saved[(node, "input")]
        assert [str(sympy.sympify(x).xreplace(m.bindings)) for x in e[2]] == ["B", "T", str(r)] and e[5] == 1
    # the latent norms save their input and 1/rms, whole
    for node in ("attention/q_a_layernorm", "attention/kv_a_layernorm"):
        assert saved[(node, "input")][5] == 1 and saved[(node, "rstd")][5] == 1
    # the attention core's tensors are per head: split 4 ways
    assert saved[("attention/softmax", "output")][5] == 4
    assert saved[("attention/proj", "input")][5] == 4


@pytest.mark.parametrize("tp", [2, 4])
def test_activation_bytes_of_the_latent_path_do_not_shrink_with_tp(tp):
    """The saved bytes whose tensor an MLA down-projection path makes are the same at tp = 1
    and at tp > 1 (without sequence parallelism): B·T·(r_q + r_q + 1 + r_c + r_c + 1) per layer
    (q_a_layernorm's and q_b_proj's input, q_a_layernorm's 1/rms; likewise for the KV latent),
    at 4 bytes (fp32) and 4 bytes for the fp32 statistic, in each of 4 layers."""
    m = symgpt.load("deepseek-v3", L=4, B=2, T=16)

    def latent(t):
        total = 0
        for node, _role, shape, per, copies, div, tensor in saved_list(m, tp=t, precision="fp32"):
            producer = tensor.split("#")[0]
            if producer in m.arch.graph and m.arch.role(producer) in MLA:
                assert replicated(m.arch, producer)
                total += m.value(sympy.Mul(*shape) * per * copies / div)
        return total

    assert latent(tp) == latent(1) == 2 * 16 * (2 * 1536 + 1 + 2 * 512 + 1) * 4 * 4


def test_a_routers_flops_and_weights_are_whole_per_rank():
    """A mixture's router is replicated (vLLM's gate, Megatron-Core's TopKRouter): Mixtral's
    d -> E router costs 2·B·T·d·E FLOPs per layer on each of 4 ranks, its weight d·E whole."""
    m = symgpt.load("mixtral-8x7b", B=1, T=128)
    d, E, layers = 4096, 8, 32
    for chips in (1, 4):
        f = m.quantity("inference.prefill.flops", chips=chips)
        w = m.quantity("inference.weights", chips=chips)
        assert sum(m.value(e) for p, e in f.breakdown if p.endswith("ffn/router")) == 2 * 128 * d * E * layers
        assert sum(m.value(e) for p, e in w.breakdown if p.endswith("ffn/router")) == 2 * d * E * layers


def test_tensor_parallel_all_reduces_of_an_mla_layer():
    """comm.tp at tp = 4, by hand (ring all-reduce: 2·(4 − 1)/4 of the tensor from each rank):
    the backward all-reduces sit at the up-projections' inputs (the normed latents, B·T·r_q and
    B·T·r_c) and at the shared rotary key (B·T·rope: each rank sums its gradient over its own
    heads); the block's normed input feeds only replicated down-projections, so needs none."""
    m = symgpt.load("deepseek-v3", B=1, T=4096, L=4)
    q = m.quantity("comm.tp", tp=4, precision="bf16")
    parts = {p: m.value(e) for p, e in q.breakdown}
    ar = sympy.Rational(2 * 3, 4) * 4096 * 2  # ring share × B·T tokens × 2 bytes
    for stack, layers in (("dense_blocks", 3), ("blocks", 1)):
        assert parts[f"tp/{stack}/attention/q_a_layernorm all-reduce (backward)"] == ar * 1536 * layers
        assert parts[f"tp/{stack}/attention/kv_a_layernorm all-reduce (backward)"] == ar * 512 * layers
        assert parts[f"tp/{stack}/attention/k_rotary all-reduce (backward)"] == ar * 64 * layers
        assert f"tp/{stack}/norms/attention all-reduce (backward)" not in parts
