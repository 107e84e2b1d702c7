"""Cohere2-MoE (transformers' ``Cohere2MoeForCausalLM``): Cohere2's parallel block (attention and
FFN on one norm, sliding-window layers with one full-attention layer without positions in every
``sliding_window_pattern``, a tied head whose logits are scaled by ``logit_scale``) with a mixture
of E SwiGLU experts in every layer, k per token, weighted by the softmax of the k largest router
logits (Cohere2MoeTopKRouter), optionally plus shared experts (num_shared_experts ×
intermediate_size) summed with the routed output. The norm is a LayerNorm without a shift, or an
RMSNorm when ``rms_norm_eps`` is set."""

from __future__ import annotations

from ..core.errors import SymgptError
from .cohere import COHERE_FLAGS, cohere_fields
from .decoders import decoder_family
from .fields import Fields, Reader, every_pth_full, layer_types, periodic_windows
from .granitemoe import ROUTER

FAMILIES = (decoder_family(
    "cohere2_moe", "Cohere2-MoE: Cohere2's parallel block and window pattern with E SwiGLU experts "
    "(softmax of the top-k logits)", window=True, full_every=4, nope_full=True, gqa=True, moe=True,
    **COHERE_FLAGS, **ROUTER),)


def read(f: Fields):
    """transformers' Cohere2MoeConfig."""
    flags, sizes = cohere_fields(f, "cohere2_moe", dict(V=256000, d=8192, d_ff=22528, L=40, h=64, T_max=8192,
                                                   head_dim=128))
    L = sizes["L"]
    if f.get("rms_norm_eps", None)[0] is not None:  # Cohere2MoeRMSNorm instead of the LayerNorm
        flags["norm"] = "rmsnorm"
    f.silent("layer_norm_eps", "rope_theta", "rope_scaling")
    if "first_k_dense_replace" in f.cfg:
        f.used.add("first_k_dense_replace")
        if f.int("first_k_dense_replace", 0, minimum=0):
            raise SymgptError(f"{f.where}: dense first layers (first_k_dense_replace) are not modelled for cohere2_moe")
    mlp = f.cfg.get("mlp_layer_types")
    f.used.add("mlp_layer_types")
    if mlp is not None and (not isinstance(mlp, list) or len(mlp) != L or set(mlp) != {"sparse"}):
        raise SymgptError(f"{f.where}: mlp_layer_types other than every layer 'sparse' is not modelled "
                          "for cohere2_moe (dense prefix layers)")
    f.silent("prefix_dense_intermediate_size", "prefix_dense_sliding_window_pattern")  # dense layers only
    p = f.int("sliding_window_pattern", 4)
    types = layer_types(f, L, every_pth_full(L, p))
    flags["full_every"] = None
    periodic_windows(f, flags, sizes, types, f.int("sliding_window", 4096, optional=True))
    flags["nope_full"] = bool(flags["full_every"])
    if not flags["window"]:
        raise SymgptError(f"{f.where}: every layer is full-attention: Cohere2-MoE layers without positions "
                          "are not modelled")
    sizes["E"] = f.int("num_experts", 8)
    sizes["k"] = f.int("num_experts_per_tok", 2)
    if f.str("expert_selection_fn", "softmax") != "softmax":
        raise SymgptError(f"{f.where}: expert_selection_fn other than softmax is not modelled")
    f.silent("norm_topk_prob")  # used with the sigmoid selection only
    shared = f.int("num_shared_experts", 0, minimum=0)
    flags["shared_expert"], flags["shared_ff"] = ("plain", shared * sizes["d_ff"]) if shared else ("none", None)
    if shared and f.str("shared_expert_combination_strategy", "average") != "sum":
        raise SymgptError(f"{f.where}: shared experts averaged with the routed output "
                          "(shared_expert_combination_strategy 'average') are not modelled")
    f.silent("shared_expert_combination_strategy")
    return "cohere2_moe", flags, sizes


READERS = {"cohere2_moe": Reader(read, ("Cohere2MoeForCausalLM",))}

PRESETS = ()
