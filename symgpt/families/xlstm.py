"""xLSTM 7B-style language models (Beck et al. 2025, "xLSTM 7B: A Recurrent LLM for Fast and
Efficient Inference"), read from transformers' xLSTMConfig and counted as ``xLSTMForCausalLM`` as
transformers runs it without the external ``xlstm`` package: L blocks of an mLSTM layer and a
SwiGLU feed-forward, each after an RMSNorm (``blocks/xlstm.py`` builds them; the cell is
``symgpt.ops.mlstm.MLSTM``). transformers' model has mLSTM blocks only (no sLSTM).

Counting convention of the cell (stated on every answer): transformers' PyTorch path in its
default ``mode`` "inference": floor(T/chunk_size) whole chunks chunkwise, the positions left
step by step. A sequence longer than ``max_inference_chunksize`` is run in pieces of that length
(each piece its own chunks and steps): not modelled, said on the answer. At inference each
layer keeps the mLSTM state (``ops.mlstm``: C, n and m, transformers' ``xLSTMCache``), not a KV cache.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {"tied": False, "bias": False, "qk_pct": 50, "v_pct": 100, "gate_softcap": 15, "logit_softcap": 30,
         "activation": "silu", "loss": True}
CHOICES = {"activation": ("silu",)}
FLAG_HELP = {
    "tied": "the LM head is the token embedding (tie_word_embeddings)",
    "bias": "projections and norms have biases (use_bias; the gates' projections always do)",
    "qk_pct": "query/key width as a percentage of d (qk_dim_factor)",
    "v_pct": "value width as a percentage of d (v_dim_factor)",
    "gate_softcap": "c: the input and forget gates' pre-activations soft-capped (gate_soft_cap; unset: none)",
    "logit_softcap": "c: logits soft-capped (output_logit_soft_cap; unset: none)",
    "activation": "the feed-forward's gate activation (SiLU, fixed by xLSTMFeedForward)",
    "loss": "the cross-entropy loss of training",
}
_BUILD = Ref("symgpt.families.blocks.xlstm", "build")

FAMILIES = (
    Family(name="xlstm", description="xLSTM (7B form): RMSNorm pre-norm blocks of an mLSTM layer (q, k, v, output "
                                     "gate, input and forget gates, the matrix-memory cell, a per-head norm) and a "
                                     "SwiGLU feed-forward, soft-capped logits",
           flags=FLAGS, sizes=("V", "d", "L", "h", "d_ff", "Q_chunk"), build=partial(_BUILD, name="xlstm"),
           flag_help=FLAG_HELP, choices=CHOICES),
)


def _pct(f: Fields, key, default) -> int:
    value, _ = f.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SymgptError(f"{f.where}: field {key!r} must be a positive number, got {value!r}")
    pct = Fraction(str(value)) * 100
    if pct.denominator != 1:
        raise SymgptError(f"{f.where}: {key} {value} is not a whole percentage")
    return int(pct)


def _cap(f: Fields, key, default):
    value, _ = f.get(key, default)
    return None if value is None else f.whole(key, default)


def read(f: Fields):
    """transformers' xLSTMConfig (``embedding_dim`` and ``num_blocks`` are hidden_size's and
    num_hidden_layers' other names). The mLSTM widths are int(hidden_size · qk_dim_factor) and
    int(hidden_size · v_dim_factor) (xLSTMLayer), the feed-forward's hidden_size · ffn_proj_factor
    rounded up to ffn_round_up_to_multiple_of as transformers' round_up_to_next_multiple_of
    computes it."""
    d = f.int("hidden_size", 4096, optional=True)
    emb = f.int("embedding_dim", None, optional=True)
    d = d if d is not None else emb
    if d is None:
        raise SymgptError(f"{f.where}: hidden_size or embedding_dim must be set")
    if emb is not None and emb != d:
        raise SymgptError(f"{f.where}: embedding_dim {emb} differs from hidden_size {d} (xLSTMForCausalLM cannot "
                          "run such a model)")
    L = f.int("num_hidden_layers", 32, optional=True)
    blocks = f.int("num_blocks", None, optional=True)
    L = L if L is not None else blocks
    if L is None:
        raise SymgptError(f"{f.where}: num_hidden_layers or num_blocks must be set")
    heads = f.int("num_heads", 8)
    qk, v = _pct(f, "qk_dim_factor", 0.5), _pct(f, "v_dim_factor", 1.0)
    for pct, what in ((qk, "qk_dim_factor"), (v, "v_dim_factor")):
        if (d * pct) % (100 * heads):
            raise SymgptError(f"{f.where}: hidden_size x {what} ({d * pct / 100:g}) is not a whole multiple of "
                              f"num_heads {heads}")
    factor, _ = f.get("ffn_proj_factor", 2.667)
    multiple = f.int("ffn_round_up_to_multiple_of", 64)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
        raise SymgptError(f"{f.where}: field 'ffn_proj_factor' must be a positive number")
    ff = int(((d * factor + multiple - 1) // multiple) * multiple)  # round_up_to_next_multiple_of, as written
    mode = f.str("mode", "inference")
    if mode != "inference":
        raise SymgptError(f"{f.where}: mode {mode!r} is not modelled (only 'inference', the default: chunkwise "
                          "then step by step)")
    weight_mode = f.str("weight_mode", "single")
    if weight_mode != "single":
        raise SymgptError(f"{f.where}: weight_mode {weight_mode!r} is not modelled (transformers' xLSTMForCausalLM "
                          "fails to initialise its fused gates' bias; only 'single' is counted)")
    sizes = {"V": f.int("vocab_size", 50304), "d": d, "L": L, "h": heads, "d_ff": ff,
             "Q_chunk": f.int("chunk_size", 64)}
    # xLSTMForCausalLM declares no tied weights: its lm_head is its own whatever tie_word_embeddings says
    f.bool("tie_word_embeddings", False)
    flags = {"tied": False, "bias": f.bool("use_bias", False), "qk_pct": qk,
             "v_pct": v, "gate_softcap": _cap(f, "gate_soft_cap", 15.0),
             "logit_softcap": _cap(f, "output_logit_soft_cap", 30.0)}
    if any((d * pct) % (100 * 64) for pct in (qk, v)):  # xLSTMCache rounds its widths up to multiples of 64
        f.notes.append("xLSTM: the inference state is priced at the layer's widths int(hidden_size·qk_dim_factor) "
                       "and int(hidden_size·v_dim_factor); transformers' xLSTMCache rounds them up to multiples "
                       "of 64 and cannot decode with a cache when they differ")
    chunk, _ = f.get("max_inference_chunksize", 16384)
    f.notes.append(f"xLSTM: counted for T up to max_inference_chunksize ({chunk}); a longer sequence is run in "
                   "pieces of that length, each its own chunks and steps (not modelled)")
    # the kernels'
    # names (transformers' native ones run whatever they say without the xlstm package),
    # precisions, eps and the state's dtype: no count. add_out_norm is read by no module.
    f.silent("chunkwise_kernel", "sequence_kernel", "step_kernel", "return_last_states", "autocast_kernel_dtype",
             "eps", "norm_eps", "inference_state_dtype", "norm_reduction_force_float32", "add_out_norm")
    return "xlstm", flags, sizes


READERS = {"xlstm": Reader(read, ("xLSTMForCausalLM",))}

PRESETS = (
    # xLSTM 7B (assembled shape fields, settled by the paper's exact count)
    Preset("xlstm-7b", "xlstm", {"V": 50304, "d": 4096, "L": 32, "h": 8, "d_ff": 10944, "Q_chunk": 64},
           source="Beck et al. 2025 (xLSTM 7B, arXiv 2503.13427), Table 4; NX-AI/xLSTM-7b (transformers' "
                  "xLSTMConfig defaults are its sizes)",
           note="6,865,424,896 parameters, the count of the paper's Table 4; 32 mLSTM blocks of width 4,096, "
                "8 heads (q, k 2,048 wide, v 4,096), a SwiGLU of 10,944 (2.667 × 4,096 rounded up to a multiple "
                "of 64); untied output head over a vocabulary of 50,304"),
)
