"""``--implementation mamba-ssm``: the saved tensors of mamba-ssm's autograd Functions, read from
the source (state-spaces/mamba e9594ce1), not measured -- the kernels need a GPU.

The oracle is hand-worked from the ``ctx.save_for_backward`` lists, independent of the engine:

* ``MambaInnerFn`` (selective_scan_interface.py lines 288-290, checkpoint_lvl=1 so conv1d_out and
  delta are None): xz (B, 2·D, T), x_dbl (B·T, R + 2N), B and C (B, 1, N, T) each, the scan's
  intermediates (B, D, ceiling(T/2048), 2N) fp32 (selective_scan.cpp lines 307, 313), out (B, D, T);
* ``MambaSplitConv1dScanCombinedFn`` (ssd_combined.py lines 888-889): zxbcdt (B, T, 2·D + 2·G·N + H),
  out_x (B, T, H, P), rstd (G·B·T,) fp32 (layernorm_gated.py ``_layer_norm_fwd``).

Everything else in the model (the norms, in_proj, the head, the loss, attention of a hybrid)
keeps what the ``fused`` rule says, and ``fused`` and ``hf-eager`` (the reference path) are
unchanged by the new name.
"""

import subprocess
import sys

import pytest
import sympy

import symgpt

ACT = 2  # bf16


def _split(model, impl, values):
    q = model.quantity("memory.activations", implementation=impl, precision="bf16")
    bound = {**{str(k): v for k, v in q.bindings.items()}, **values}  # a preset's sizes, then B and T
    at = {p: int(sympy.sympify(e).xreplace({s: bound[s.name] for s in sympy.sympify(e).free_symbols}))
          for p, e in q.breakdown}
    mixer = sum(v for p, v in at.items() if "/mixer/" in p and not p.endswith("/in_proj"))
    rest = {p: v for p, v in at.items() if "/mixer/" not in p or p.endswith("/in_proj")}
    return mixer, rest, q


def test_mamba1_inner_fn_hand_worked():
    sizes = dict(d=8, d_inner=16, d_state=4, r_dt=2, d_conv=4, V=32, L=2)
    values = {**sizes, "B": 2, "T": 3000}  # two chunks of 2048 steps
    m = symgpt.load("mamba", **sizes)
    b, t, dd, n, r = 2, 3000, 16, 4, 2
    per_layer = (b * 2 * dd * t * ACT          # xz
                 + b * t * (r + 2 * n) * ACT   # x_dbl
                 + 2 * b * n * t * ACT         # B and C copies
                 + b * dd * 2 * (2 * n) * 4    # scan intermediates, fp32, ceiling(3000/2048) = 2
                 + b * dd * t * ACT)           # the scan's output before the gate
    mixer, rest, q = _split(m, "mamba-ssm", values)
    assert mixer == 2 * per_layer
    _, fused_rest, _ = _split(m, "fused", values)
    assert rest == fused_rest
    assert any("read from the source, not measured" in n_ for n_ in q.notes)


def test_mamba2_split_conv1d_scan_combined_hand_worked():
    sizes = dict(d=8, d_inner=16, d_state=4, d_conv=4, V=32, L=3, h_ssm=4, G_ssm=2, Q_chunk=8)
    values = {**sizes, "B": 3, "T": 20}
    m = symgpt.load("mamba2", **sizes)
    b, t, dd, n, g, h = 3, 20, 16, 4, 2, 4
    per_layer = (b * t * (2 * dd + 2 * g * n + h) * ACT  # zxbcdt
                 + b * t * dd * ACT                      # out_x (B, T, H, P)
                 + g * b * t * 4)                        # rstd of the grouped RMSNorm, fp32
    mixer, rest, _ = _split(m, "mamba-ssm", values)
    assert mixer == 3 * per_layer
    _, fused_rest, _ = _split(m, "fused", values)
    assert rest == fused_rest


def test_hybrid_attention_layers_keep_the_fused_rule():
    m = symgpt.load("nemotron-h-8b")
    values = {"B": 1, "T": 4096}
    mixer, rest, _ = _split(m, "mamba-ssm", values)
    _, fused_rest, _ = _split(m, "fused", values)
    assert rest == fused_rest and mixer > 0


def test_reference_paths_unchanged_by_the_name():
    """fused and hf-eager answer as before: the kernel rules apply only under mamba-ssm."""
    m = symgpt.load("mamba", d=8, d_inner=16, d_state=4, r_dt=2, d_conv=4, V=32, L=2)
    eager = m.quantity("memory.activations", implementation="hf-eager").expr
    fused = m.quantity("memory.activations", implementation="fused").expr
    kernel = m.quantity("memory.activations", implementation="mamba-ssm").expr
    assert sympy.simplify(eager - fused) != 0 and sympy.simplify(kernel - fused) != 0
    from symgpt.ops.ssm import SelectiveScan
    from symgpt.ops.base import Context
    shape = (2, 5, 16)
    bc = (2, 5, 4)
    op = SelectiveScan(16, 4)
    assert len(op.saved((shape, shape, bc, bc), shape, Context(implementation="fused"))) == 4
    assert len(op.saved((shape, shape, bc, bc), shape, Context(implementation="hf-eager"))) == 7


@pytest.mark.parametrize("name, why", [
    ("gpt2-small", "has none"),
    ("falcon-mamba-7b", "normalises Δ, B and C"),
])
def test_refusals_are_one_line(name, why):
    r = subprocess.run([sys.executable, "-m", "symgpt", "memory", name, "--implementation", "mamba-ssm"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symgpt: error: ") and why in lines[0]


@pytest.mark.parametrize("name, why", [
    ("jamba-1.5-mini", "does not call"),        # JambaMambaMixer: causal_conv1d_fn, then selective_scan_fn
    ("qwen3-next-80b-a3b", "does not call"),    # gated delta rule: fla's kernels, not mamba-ssm's
])
def test_other_mixers_refused(name, why):
    with pytest.raises(symgpt.SymgptError, match=why):
        symgpt.load(name).quantity("memory.activations", implementation="mamba-ssm")
