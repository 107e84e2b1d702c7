"""Counting conventions: how op work becomes FLOPs and how saved tensors become bytes.

A :class:`Convention` is a frozen set of named choices. The ops state *what* they do (multiply-adds,
elements, saved tensors); a convention decides *what counts* and at what price. Every published
figure rests on one; the presets below reproduce each paper.

>>> convention("kaplan").attention_values
False
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import sympy

from .errors import SymgptError

RECOMPUTE = ("none", "selective", "full")
ATTENTION = ("eager", "flash")
PER = ("batch", "sequence", "token")
NORM_STATS = ("fp32", "act", "none")
IMPLEMENTATIONS = ("fused", "hf-eager")  # whose code saved tensors follow (ops' Context.implementation)
# named kernel libraries (derive.memory_kernels: their autograd Functions' saved lists)
IMPLEMENTATIONS += ("mamba-ssm",)
# flash-linear-attention and causal-conv1d (derive.memory_kernels_fla)
IMPLEMENTATIONS += ("fla",)
MASK_DTYPES = ("bool", "act")


@dataclass(frozen=True)
class Convention:
    """A named counting convention.

    FLOPs: ``flops_per_mac`` (2: a multiply-add is two FLOPs; 1: count MACs); FLOPs per element
    of ``softmax``, ``norm``, ``activation``, ``elementwise`` (bias adds, residuals, masks,
    scales) and ``loss`` work (0 by default: matmuls only); ``causal_halving`` halves the
    attention matmuls a causal kernel skips; ``lm_head`` counts the final projection;
    ``embedding_matmul`` counts the token lookup as a one-hot matmul; ``attention_values``
    counts A·V (Kaplan counts only Q·Kᵀ); ``backward_factor`` (None: each op's own backward rule,
    given which inputs need gradients; a number: backward = that × forward, Chinchilla's 2);
    ``attention_backward`` (None: the op rules; 5/2: FlashAttention's benchmark convention for
    the attention matmuls); ``recompute`` (none | selective: the attention core | full: every
    repeated block) and ``hardware`` (count the recomputed forward in ``flops.train``: hardware
    FLOPs, vs model FLOPs); ``recompute_passes`` (forward-equivalents one recomputation costs:
    1, or 3 to reproduce Korthikanti's Eq. 8 as printed); ``per`` (batch | sequence | token).

    Memory: ``precision`` (default precision policy), ``attention`` (eager | flash),
    ``dropout`` (None: as the model's flags say), ``norm_stats`` (how the per-row mean/rstd of
    a norm are stored: fp32 | act | none), ``dropout_mask`` (bool: 1 byte, CUDA; act: the
    activation dtype, PyTorch on CPU), ``causal_mask_saved`` (eager attention's (T, T) bool mask,
    one per layer as each layer makes it -- nanoGPT's ``masked_fill``; a mask built once per attention
    kind and shared by its layers, as transformers' masking_utils builds them, would keep kinds·B·T²
    bytes instead, a sharing not modelled; transformers' own eager attention adds a float mask and
    keeps none),
    ``loss_saved`` (the loss's log-probabilities and targets), ``rms_normed_saved`` (an unfused
    RMSNorm -- PyTorch's composite on CPU, transformers' ``LlamaRMSNorm`` -- also saves the
    normalised ``x·rstd`` for the scale's gradient); ``implementation`` (fused: each op one
    kernel keeping the least its backward needs -- the ideal; hf-eager: as transformers' eager
    modules write them, where an op written as several PyTorch ops keeps what each of them saves:
    the tanh GELU of GPT-2 / Phi-2 (``gelu_new``) keeps x, tanh(·), x/2 and 1 + tanh(·); Gemma's
    norms build a fresh (1 + w) vector each and its embedding scale is a saved 0-dim tensor; an
    eager mixture-of-experts loop gathers each expert's tokens and keeps the indices).
    """

    name: str
    source: str
    summary: str
    flops_per_mac: int = 2
    softmax: sympy.Rational = sympy.Integer(0)
    norm: sympy.Rational = sympy.Integer(0)
    activation: sympy.Rational = sympy.Integer(0)
    elementwise: sympy.Rational = sympy.Integer(0)
    loss: sympy.Rational = sympy.Integer(0)
    causal_halving: bool = False
    lm_head: bool = True
    embedding_matmul: bool = False
    attention_values: bool = True
    backward_factor: sympy.Rational | None = None
    attention_backward: sympy.Rational | None = None
    recompute: str = "none"
    hardware: bool = False
    recompute_passes: sympy.Rational = sympy.Integer(1)
    per: str = "batch"
    precision: str = "fp32"
    attention: str = "eager"
    dropout: bool | None = None
    norm_stats: str = "fp32"
    dropout_mask: str = "bool"
    causal_mask_saved: bool = True
    loss_saved: bool = True
    rms_normed_saved: bool = False
    implementation: str = "fused"

    def __post_init__(self) -> None:
        check_choice("recompute", self.recompute, RECOMPUTE)
        check_choice("per", self.per, PER)
        check_choice("attention", self.attention, ATTENTION)
        check_choice("norm_stats", self.norm_stats, NORM_STATS)
        check_choice("dropout_mask", self.dropout_mask, MASK_DTYPES)
        check_choice("implementation", self.implementation, IMPLEMENTATIONS)
        if self.flops_per_mac not in (1, 2):
            raise SymgptError(f"flops_per_mac is 1 or 2, got {self.flops_per_mac!r}")

    def with_(self, **changes) -> "Convention":
        """A copy with some choices changed (unknown names raise)."""
        known = {f.name for f in fields(self)}
        for k in changes:
            if k not in known:
                raise SymgptError(f"conventions have no choice {k!r}; choices: {', '.join(sorted(known))}")
        return replace(self, **changes)

    def choices(self) -> dict:
        """Every choice as a plain dict (for JSON and tables)."""
        out = {}
        for f in fields(self):
            if f.name in ("name", "source", "summary"):
                continue
            v = getattr(self, f.name)
            out[f.name] = str(v) if isinstance(v, sympy.Basic) else v
        return out


def check_choice(what: str, value, allowed) -> None:
    if value not in allowed:
        raise SymgptError(f"unknown {what} {value!r}; choose one of: {', '.join(map(str, allowed))}")


_R = sympy.Rational

_PRESETS = (
    Convention(
        "default",
        "PyTorch: torch.utils.flop_counter.FlopCounterMode",
        "matmuls only, 2 FLOPs per multiply-add, full T×T attention (Q·Kᵀ and A·V), LM head in, "
        "embedding lookup free, backward from each op's rule; memory: the tensors PyTorch saves "
        "for backward on CUDA (bool dropout masks, fp32 norm statistics)",
    ),
    Convention(
        "pytorch-cpu",
        "PyTorch eager on CPU, measured with torch.autograd.graph.saved_tensors_hooks",
        "FLOPs as default; memory: the tensors PyTorch saves on CPU running transformers' eager "
        "modules (norm statistics and dropout masks in the activation dtype; an RMSNorm also "
        "keeps x·rstd; implementation hf-eager)",
        norm_stats="act", dropout_mask="act", rms_normed_saved=True, implementation="hf-eager",
    ),
    Convention(
        "kaplan",
        "Kaplan et al. 2020, Scaling Laws for Neural Language Models, Sec. 2.1 and Table 1",
        "per token; 2 FLOPs per multiply-add; Q·Kᵀ counted, A·V not; LM head and embeddings "
        "out; nonlinearities, biases and norms omitted: C_forward = 2N + 2·L·T·d, training 3×",
        lm_head=False, attention_values=False, per="token",
    ),
    Convention(
        "chinchilla",
        "Hoffmann et al. 2022 (Chinchilla), Appendix F",
        "per sequence; embedding lookup counted as a matmul (2TVd); 3 FLOPs per softmax element; "
        "Q·Kᵀ and A·V full T²; LM head in; backward = 2 × forward",
        embedding_matmul=True, softmax=sympy.Integer(3), backward_factor=sympy.Integer(2),
        per="sequence",
    ),
    Convention(
        "megatron",
        "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters, Eq. 3",
        "F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)): full activation recomputation counted "
        "(layers 4× forward), logits 3× forward; matmuls only",
        recompute="full", hardware=True, precision="mixed-fp16",
    ),
    Convention(
        "korthikanti",
        "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, "
        "Eq. 7 (model FLOPs) and Sec. 4 (activation memory)",
        "model FLOPs 72·B·L·s·h²·(1 + s/(6h) + v/(12hL)) (no recomputation counted); activations "
        "16-bit with 1-byte dropout masks, norm statistics and the causal mask ignored, "
        "sbh(34 + 5as/h) per layer",
        precision="mixed-bf16", dropout=True, norm_stats="none", causal_mask_saved=False,
    ),
    Convention(
        "korthikanti-hfu",
        "Korthikanti et al. 2022, Appendix A, hardware FLOPs as its text implies",
        "hardware FLOPs with selective recomputation: the recomputed Q·Kᵀ and A·V add "
        "4·B·s²·h per layer, so 72·B·L·s·h²·(1 + 2s/(9h) + v/(12hL)) (16·B·L·s²·h)",
        recompute="selective", hardware=True, precision="mixed-bf16", dropout=True,
        norm_stats="none", causal_mask_saved=False,
    ),
    Convention(
        "korthikanti-eq8",
        "Korthikanti et al. 2022, Appendix A, Eq. 8 as printed",
        "72·B·L·s·h²·(1 + s/(3h) + v/(12hL)) (24·B·L·s²·h): as if the recomputed attention core "
        "cost its forward and backward again (3 passes); the paper's text implies 1 pass",
        recompute="selective", hardware=True, recompute_passes=sympy.Integer(3),
        precision="mixed-bf16", dropout=True, norm_stats="none", causal_mask_saved=False,
    ),
    Convention(
        "megatron-theoretical",
        "Megatron-LM, megatron/training/theoretical_memory_usage.py (Korthikanti et al. 2022, Table 2)",
        "Megatron-LM's training memory: bf16 weights, fp32 gradients (main_grad), fp32 master and "
        "Adam moments (18 bytes per parameter); selective recomputation; activations 16-bit with "
        "1-byte dropout masks, norm statistics and the causal mask ignored; "
        "'symgpt memory' also prints Megatron-LM's own estimate beside the exact count",
        recompute="selective", precision="mixed-bf16-fp32grad", dropout=True, norm_stats="none",
        causal_mask_saved=False,
    ),
    Convention(
        "palm",
        "Chowdhery et al. 2022 (PaLM), Appendix B",
        "per token, training 6N + 12·L·H·Q·T: N = the weights that enter a matmul (for PaLM, "
        "all parameters up to its norm scales; for GPT-2, 12Ld² + Vd: not biases, norms or "
        "the position table); full T² attention; no recomputation counted (MFU, not HFU)",
        per="token",
    ),
    Convention(
        "flash",
        "Dao et al. 2022 (FlashAttention) benchmark scripts",
        "2 FLOPs per multiply-add; attention matmuls halved by the causal mask; attention "
        "backward = 2.5 × its forward; flash attention memory",
        causal_halving=True, attention_backward=_R(5, 2), attention="flash",
    ),
)

CONVENTIONS: dict[str, Convention] = {c.name: c for c in _PRESETS}


def convention(name) -> Convention:
    """The named convention (a :class:`Convention` passes through); unknown names raise."""
    if isinstance(name, Convention):
        return name
    if name is None:
        return CONVENTIONS["default"]
    try:
        return CONVENTIONS[name]
    except (KeyError, TypeError):
        raise SymgptError(
            f"unknown convention {name!r}; known conventions: {', '.join(CONVENTIONS)}"
        ) from None
