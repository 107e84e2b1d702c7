"""Saved tensors under ``--implementation fla``: flash-linear-attention's gated delta rule and
causal-conv1d's short convolution, *read from the source, not measured* (the kernels need a GPU).

transformers' Gated DeltaNet mixers (``Qwen3NextGatedDeltaNet`` and the same forward in Qwen3.5,
Qwen3.5-MoE, OLMo-Hybrid and Lara-Mini) call, when the packages are installed, causal-conv1d's
``causal_conv1d_fn`` (activation silu) on the concatenated q, k, v and fla's
``chunk_gated_delta_rule`` (``use_qk_l2norm_in_kernel=True``, no initial state, no cu_seqlens);
LFM2's short convolution calls ``causal_conv1d_fn`` without an activation. Each is one autograd
Function with its own ``ctx.save_for_backward`` list:

* ``CausalConv1dFn.forward`` (Dao-AILab/causal-conv1d at commit
  0d2252d161f25f7907bbd05985c08ab98d255874, ``causal_conv1d/causal_conv1d_interface.py`` line 59):
  x (its input, at its own dtype; a channel-last input is not copied, line 24), the weight and the
  bias. The output is not saved: the backward recomputes the convolution for the SiLU's derivative.
* ``ChunkGatedDeltaRuleFunction.forward`` (fla-org/flash-linear-attention at commit
  bc3b101dcb713ddc5bd8924b66754eb68b5ccf89, ``fla/ops/gated_delta_rule/chunk.py`` lines 310-326):
  q and k after ``l2norm_fwd`` (``fla/modules/l2norm.py`` line 157: at the input's dtype) and their
  rstd (line 168: fp32, one per row of d_k); v, the contiguous copy ``input_guard``
  (``fla/utils/_decorators.py`` line 93) makes of transformers' strided view; g after
  ``chunk_local_cumsum`` (``fla/ops/utils/cumsum.py`` line 434: ``output_dtype=torch.float``, fp32,
  (B, T, H)); beta, saved twice as beta_raw and beta (the same tensor: the sigmoid is not in the
  kernel); and A, the solved (I + A)⁻¹ of each chunk (``fla/ops/gated_delta_rule/chunk_fwd.py``
  line 385: (B, T, H, 64) at k's dtype). The WY factors w and u, the chunk states h and v_new are
  recomputed in backward (``chunk.py`` lines 147-171).

Outside the Functions, transformers' own PyTorch ops keep what autograd keeps: β = sigmoid(b)
keeps its output (the kernel's beta, counted once; OLMo-Hybrid doubles β when
``linear_allow_neg_eigval``, a new tensor, so the sigmoid's output is a second one), and
g = -exp(A_log.float())·softplus(a.float() + dt_bias) keeps softplus's fp32 input and the product's
fp32 operand softplus(·), (B, T, H) each (modeling_qwen3_next.py: ``Qwen3NextGatedDeltaNet.forward``).
The gated RMSNorm, the gate and the projections (transformers' PyTorch modules) are counted by the
``fused`` rule, as every op outside a kernel library's Functions is. Parameters and parameter-sized tensors (the conv weight, -exp(A_log)) are left out.

Kimi Linear's Kimi Delta Attention (``KimiLinearDeltaAttention``) calls ``causal_conv1d_fn`` (the
model's activation, SiLU) and fla's ``chunk_kda`` (``use_qk_l2norm_in_kernel=True``, the gate computed
outside the kernel). ``ChunkKDAFunction.forward`` (``fla/ops/kda/chunk.py`` lines 103-107) saves q and
k after ``l2norm_fwd`` with their fp32 rstd, v's contiguous copy, g's chunk-local cumsum
(B, T, H, d_k) fp32 (``chunk_local_cumsum``'s ``output_dtype=torch.float``), g_input (the forget gate
as passed: transformers' fp32 (B, T, H, d_k)), beta (beta_raw, the same tensor), and Aqk and Akk
(``fla/ops/kda/chunk_intra.py`` lines 817-819: (B, T, H, 64) each at k's dtype); w, u, qg, kg, v_new and
h are None with the default ``disable_recompute=False`` (``fla/ops/kda/chunk_fwd.py`` lines 127-131) and
recomputed. Around it, ``KimiLinearForgetGate.forward`` (modeling_kimi_linear.py) keeps exp(g)'s fp32
output, log's fp32 input 1 + exp(g), torch.where's bool condition g > 20 and the product's fp32
operand softplus(g), (B, T, H·d_k) each; sigmoid(b_proj(x)) keeps its output (the kernel's beta).

Assumed, and said in the answer's notes: fla's Triton path. Its FlashQLA backend
(``fla/ops/gated_delta_rule/backends/flash_qla.py``) replaces the gated delta rule's Function on
SM90/SM100 with d_k = d_v = 128 where the flash_qla package is installed; its saved tensors are not
read. FlashKDA serves inference only and the TileLang KDA backend one backward kernel, so neither
changes what ``chunk_kda`` keeps in training. Refused in one line: every other recurrent mixer
(Mamba: ``--implementation mamba-ssm``; Ling 3's Kimi delta attention, RWKV, RG-LRU, mLSTM).
"""

from __future__ import annotations

from ..core.errors import SymgptError
from ..graph import roles as R
from ..ops.base import Saved, numel

NOTE = ("implementation fla: each Gated DeltaNet mixer keeps what fla's ChunkGatedDeltaRuleFunction saves "
        "(fla-org/flash-linear-attention bc3b101d, fla/ops/gated_delta_rule/chunk.py lines 310-326: q and k "
        "l2-normalised with their fp32 rstd, v's contiguous copy, g's chunk-local cumsum in fp32, beta, "
        "A (B, T, H, 64)), "
        "each Kimi Delta Attention mixer what ChunkKDAFunction saves (fla/ops/kda/chunk.py lines 103-107: the same "
        "with g per channel, the fp32 gate as passed, Aqk and Akk (B, T, H, 64)) "
        "and each short convolution what causal-conv1d's CausalConv1dFn saves (Dao-AILab/causal-conv1d 0d2252d1, "
        "causal_conv1d/causal_conv1d_interface.py line 59: its input; the SiLU recomputed), plus transformers' "
        "gate ops around them (sigmoid's output; softplus's fp32 input and output; Kimi's exp, log input, where mask "
        "and softplus); read from the source, not measured; fla's Triton path assumed (not the FlashQLA backend); "
        "every other op as fused")

#: fla's chunk length: the default of ``chunk_gated_delta_rule`` (``fla/ops/gated_delta_rule/chunk.py`` line 538)
#: and of ``chunk_kda`` (``fla/ops/kda/chunk.py`` line 393), which transformers keeps
FLA_CHUNK = 64

#: transformers' Gated DeltaNet mixers that call causal_conv1d_fn and chunk_gated_delta_rule as read above
GDN_FAMILIES = ("qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "lara_mini")
#: transformers' Kimi Delta Attention mixers that call causal_conv1d_fn and chunk_kda as read above
KDA_FAMILIES = ("kimi_linear",)
#: transformers' short-convolution mixers that call causal_conv1d_fn (no activation): Lfm2ShortConv
CONV_FAMILIES = ("lfm2",)


def check(model) -> None:
    """Refuse in one line a model whose recurrent layers the fla / causal-conv1d lists do not describe."""
    arch, fam = model.arch, model.family.name
    kinds = {a["op"].kind for n, a in arch.ops() if arch.role(n) in (R.SSM_SCAN, R.SSM_CONV)}
    if not kinds:
        raise SymgptError(f"--implementation fla describes Gated DeltaNet and short-convolution layers; {model.name} "
                          "has none (use fused or hf-eager)")
    if fam not in GDN_FAMILIES + KDA_FAMILIES + CONV_FAMILIES or \
            kinds - {"gated_delta_rule", "kimi_delta_rule", "causal_conv1d"}:
        raise SymgptError(f"--implementation fla: {model.name}'s transformers mixer ({fam}) is not one whose fla or "
                          "causal-conv1d saved tensors are read (Gated DeltaNet, Kimi Linear's delta attention, LFM2's "
                          "short convolution); use fused or hf-eager")
    if fam in KDA_FAMILIES and model.flags.get("activation") not in ("silu", "swish"):
        raise SymgptError(f"--implementation fla: {model.name}'s conv activation {model.flags.get('activation')!r} is "
                          "not one causal_conv1d_fn fuses (silu); use fused or hf-eager")


def saved(arch, node, a, inputs, flags) -> tuple | None:
    """What op *node* keeps under fla, or None where the op's own (fused) rule holds."""
    role, op, out = arch.role(node), a["op"], tuple(a["shape"])
    if role == R.SSM_CONV:  # CausalConv1dFn: x alone (and the weight, a parameter)
        return (Saved("x (kernel)", tuple(inputs[0]), shares="input0"),)
    if role == R.SSM_CONV_ACT:
        return ()  # fused into causal_conv1d_fn, recomputed in its backward
    if role == R.SSM_SCAN and op.kind == "gated_delta_rule":
        q, k, v, _a, _b = inputs
        rows = out[:-1]                      # (B, T)
        heads = (*rows, op.v_heads)          # (B, T, H): g, beta, the gate's tensors
        kept = (Saved("q l2-normalised (kernel)", tuple(q)),
                Saved("q rstd (kernel)", (numel(rows) * op.k_heads,), "fp32"),
                Saved("k l2-normalised (kernel)", tuple(k)),
                Saved("k rstd (kernel)", (numel(rows) * op.k_heads,), "fp32"),
                Saved("v contiguous copy (kernel)", tuple(v)),
                Saved("g chunk-local cumsum (kernel)", heads, "fp32"),
                Saved("beta (kernel)", heads),
                Saved("A (kernel)", (*heads, FLA_CHUNK)),
                Saved("softplus input (fp32)", heads, "fp32"),
                Saved("softplus output (fp32)", heads, "fp32"))
        if flags.get("gdn_beta_doubled"):  # beta * 2.0: the sigmoid keeps its own output besides
            kept += (Saved("sigmoid output (before doubling)", heads),)
        return kept
    if role == R.SSM_SCAN and op.kind == "kimi_delta_rule":
        return _kda(op, inputs, out)
    return None


def _kda(op, inputs, out) -> tuple:
    """ChunkKDAFunction's list and KimiLinearForgetGate's and the sigmoid's saved tensors."""
    q, k, v, f, _b = inputs
    rows = out[:-1]                          # (B, T)
    heads = (*rows, op.heads)                # (B, T, H)
    gate = tuple(f)                          # (B, T, H·d_k): the per-channel decay
    return (Saved("q l2-normalised (kernel)", tuple(q)),
            Saved("q rstd (kernel)", (numel(rows) * op.heads,), "fp32"),
            Saved("k l2-normalised (kernel)", tuple(k)),
            Saved("k rstd (kernel)", (numel(rows) * op.heads,), "fp32"),
            Saved("v contiguous copy (kernel)", tuple(v)),
            Saved("g chunk-local cumsum (kernel)", gate, "fp32"),
            Saved("g input (kernel)", gate, "fp32"),
            Saved("beta (kernel)", heads),
            Saved("Aqk (kernel)", (*heads, FLA_CHUNK)),
            Saved("Akk (kernel)", (*heads, FLA_CHUNK)),
            Saved("exp(g) (fp32)", gate, "fp32"),
            Saved("1 + exp(g) (fp32)", gate, "fp32"),
            Saved("g > 20 (where)", gate, "bool"),
            Saved("softplus(g) (fp32)", gate, "fp32"))
