"""ERNIE 4.5 MoE (Baidu 2025, baidu/ERNIE-4.5-21B-A3B-PT; transformers' ``Ernie4_5_MoeForCausalLM``):
ERNIE 4.5's block (GQA, interleaved RoPE, a tied head) with dense first layers, then a mixture of
routed SwiGLU experts chosen by a softmax router whose choice adds a learned bias of E
(``moe_statics.e_score_correction_bias``: a parameter, counted), plus a plain shared expert of
moe_num_shared_experts × moe_intermediate_size."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import INTERLEAVED, decoder_family
from .fields import Fields, Reader, llama_like

_ADDED = {**INTERLEAVED["added"], "score_bias": True}
_HELP = {**INTERLEAVED["added_help"],
         "score_bias": "the router's choice adds a learned bias of E to the scores (moe_statics: E "
                       "parameters per MoE layer, which transformers keeps in float32 and does not train)"}

FAMILIES = (decoder_family("ernie4_5_moe", "ERNIE 4.5 MoE: ERNIE 4.5's block, dense first layers, then "
                           "softmax-routed SwiGLU experts (a score bias for the choice) plus a shared expert",
                           added=_ADDED, added_help=_HELP, gqa=True, tied=True, moe=True,
                           shared_expert="plain", dense_layers=1),)


def read(f: Fields):
    """transformers' Ernie4_5_MoeConfig (``num_experts`` and ``num_experts_per_tok`` are its aliases
    of moe_num_experts and moe_k): layer i has experts when (i + 1) % moe_layer_interval == 0 and
    moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer)."""
    f.rename({"num_experts": "moe_num_experts", "num_experts_per_tok": "moe_k"})
    flags, sizes = llama_like(f, dict(V=103424, d=2560, d_ff=12288, L=28, h=20, h_kv=4, T_max=131072,
                                      tied=True))
    if f.bool("use_bias", False):
        raise SymgptError(f"{f.where}: use_bias=true is not modelled (biases on the attention, dense and "
                          "shared projections and the head, none on the routed experts)")
    L = sizes["L"]
    start = f.int("moe_layer_start_index", 1, minimum=0)
    end = f.int("moe_layer_end_index", -1, minimum=-1)
    end = L - 1 if end == -1 else end
    step = f.int("moe_layer_interval", 1)
    moe = [i for i in range(L) if (i + 1) % step == 0 and start <= i <= end]
    if not moe:
        raise SymgptError(f"{f.where}: no layer has experts (moe_layer_start_index / end_index / interval)")
    dense = moe[0]
    if moe != list(range(dense, L)):
        raise SymgptError(f"{f.where}: dense layers after the first MoE layer (moe_layer_end_index, "
                          "moe_layer_interval) are not modelled")
    flags["dense_layers"], flags["dense_ff"] = (dense, sizes["d_ff"]) if dense else (None, None)
    sizes["d_ff"] = f.int("moe_intermediate_size", 1536)
    sizes["E"] = f.int("moe_num_experts", 64)
    sizes["k"] = f.int("moe_k", 6)
    shared = f.int("moe_num_shared_experts", 2, minimum=0)
    flags["shared_expert"], flags["shared_ff"] = ("plain", shared * sizes["d_ff"]) if shared else ("none", None)
    f.silent("moe_norm_min")  # a clamp of the weights' sum: no count
    f.notes.append("moe_statics.e_score_correction_bias (E per MoE layer) is counted as a parameter, as "
                   "transformers does; it is kept in float32 and not trained (requires_grad=False), and the "
                   "router weights are kept in float32: weight, gradient and optimizer bytes count them at the "
                   "chosen precision and as trained")
    return "ernie4_5_moe", flags, sizes


READERS = {"ernie4_5_moe": Reader(read, ("Ernie4_5_MoeForCausalLM",))}

PRESETS = ()
