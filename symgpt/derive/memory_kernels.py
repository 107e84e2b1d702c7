"""Saved tensors of a named kernel library: ``--implementation mamba-ssm``.

``fused`` is the ideal (each op one kernel keeping the least its backward needs) and ``hf-eager``
transformers' PyTorch path (checked against ``saved_tensors_hooks``). A Mamba mixer trained on a GPU
runs neither: transformers' ``MambaMixer`` and ``Mamba2Mixer`` (and the Mamba-2 mixers of Bamba,
Nemotron-H, Granite 4.0-H, Falcon-H1 and Zamba2) call, when ``self.training`` and no cache, one
autograd Function of mamba-ssm for everything after in_proj, and that Function keeps its own list
of tensors (``ctx.save_for_backward``). Those lists are *read from the source, not measured* (the
kernels need a GPU): state-spaces/mamba at commit e9594ce1c732d97440f0332fdc43170a2294dbfa,

* Mamba-1, ``MambaInnerFn.forward`` (mamba_ssm/ops/selective_scan_interface.py, lines 196-291,
  ``save_for_backward`` at 288-290, default ``checkpoint_lvl=1``: conv1d_out and delta set to None
  and recomputed): xz (the in_proj output made contiguous, (B, 2·d_inner, T)), x_dbl (x_proj's
  output, (B·T, r_dt + 2·d_state)), B and C (contiguous copies, (B, 1, d_state, T) each), the
  scan's intermediates (B, d_inner, ceiling(T/2048), 2·d_state) at A's dtype, fp32
  (csrc/selective_scan/selective_scan.cpp, lines 307 and 313) and the scan's output before the
  gate (B, d_inner, T) at Δ's dtype (line 311); out_proj's input is recomputed in backward;
* Mamba-2, ``MambaSplitConv1dScanCombinedFn.forward`` (mamba_ssm/ops/triton/ssd_combined.py,
  lines 820-897, ``save_for_backward`` at 888-889): zxbcdt (the in_proj output, whole), the scan's
  output before the gate (B, T, H, P) at x's dtype, and, with the grouped RMSNorm, its rstd
  (G·B·T,) fp32 (mamba_ssm/ops/triton/layernorm_gated.py, ``_layer_norm_fwd``); the conv output,
  the chunk states and out_proj's input are recomputed.

Parameters and parameter-sized copies (A = -exp(A_log), D, the conv weight, autocast's bf16 copies
of the projection weights) are not activations and are left out. Every op outside the mixer keeps
what the ``fused`` rule says.
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from ..graph import roles as R
from ..ops.base import Saved, numel
from . import memory_kernels_fla as fla

#: the kernel libraries an ``implementation`` may name, each with its note
KERNELS = {
    "mamba-ssm": ("implementation mamba-ssm: each Mamba mixer after in_proj saves what mamba-ssm's autograd Function "
                  "keeps (MambaInnerFn for Mamba-1, MambaSplitConv1dScanCombinedFn for Mamba-2; "
                  "state-spaces/mamba e9594ce1, mamba_ssm/ops/selective_scan_interface.py lines 286-290, "
                  "mamba_ssm/ops/triton/ssd_combined.py lines 888-889), read from the source, not measured; "
                  "parameter-sized copies left out; every other op as fused"),
}
# flash-linear-attention's gated delta rule and causal-conv1d's short convolution (derive.memory_kernels_fla)
KERNELS["fla"] = fla.NOTE

#: mamba-ssm's selective-scan kernel keeps its running state once per chunk of this many steps
SCAN_CHUNK = 2048

#: families whose transformers mixer calls one mamba-ssm Function in training (checked per model below)
_MIXER_FAMILIES = ("mamba", "mamba2", "hybrid", "zamba2")


def check(model, implementation: str = "mamba-ssm") -> None:
    """Refuse in one line a model whose recurrent layers the named library's Functions do not describe."""
    if implementation == "fla":
        return fla.check(model)
    arch, fam = model.arch, model.family.name
    scans = [a["op"].kind for _n, a in arch.ops() if arch.role(_n) == R.SSM_SCAN]
    if not scans:
        raise SymgptError(f"--implementation mamba-ssm describes Mamba mixers; {model.name} has none "
                          "(use fused or hf-eager)")
    if fam not in _MIXER_FAMILIES or set(scans) - {"selective_scan", "ssd_scan"}:
        raise SymgptError(f"--implementation mamba-ssm: {model.name}'s transformers mixer ({fam}) does not call "
                          "mamba-ssm's MambaInnerFn or MambaSplitConv1dScanCombinedFn in training; its kernels' "
                          "saved tensors are not read (use fused or hf-eager)")
    if model.flags.get("bcdt_norm"):
        raise SymgptError(f"--implementation mamba-ssm: {model.name} normalises Δ, B and C inside the kernel call "
                          "(Falcon-Mamba, Jamba); those saved tensors are not read (use fused or hf-eager)")


def saved(arch, node, a, inputs, implementation: str = "mamba-ssm", flags=None) -> tuple | None:
    """What op *node* keeps under the named library (mamba-ssm unless *implementation* says otherwise),
    or None where the op's own (fused) rule holds; *flags*: the model's (read by the fla lists)."""
    if implementation == "fla":
        return fla.saved(arch, node, a, inputs, flags or {})
    role, op, out = arch.role(node), a["op"], tuple(a["shape"])
    if role == R.SSM_CONV:  # the Function keeps the whole in_proj output (xz / zxbcdt)
        base = arch.graph.nodes[a["inputs"][0]]
        whole = arch.shape(base["inputs"][0]) if base["kind"] == "op" and base["op"].kind == "slice" else out
        return (Saved("in_proj output (kernel)", tuple(whole)),)
    if role == R.SSM_X:
        return (Saved("x_dbl (kernel)", out, shares="output"),)
    if role == R.SSM_SCAN and op.kind == "selective_scan":
        _x, _dt, b, c = inputs
        steps = sympy.ceiling(out[-2] / SCAN_CHUNK)
        return (Saved("B (kernel copy)", tuple(b)), Saved("C (kernel copy)", tuple(c)),
                Saved("scan intermediates (kernel)", (*out[:-2], op.inner, steps, 2 * op.state), "fp32"),
                Saved("scan output (kernel)", out))
    if role == R.SSM_SCAN and op.kind == "ssd_scan":
        return (Saved("scan output (kernel)", out),)
    if role == R.SSM_OUT_NORM:
        return (Saved("rstd (kernel)", (numel(out[:-1]) * op.groups,), "fp32"),)
    if role in (R.SSM_CONV_ACT, R.SSM_DT, R.SSM_GATE_ACT, R.SSM_GATE, R.SSM_OUT):
        return ()  # recomputed inside the Function's backward
    return None
