"""Unlimited-OCR's language model (Baidu; transformers' ``UnlimitedOcrTextModel`` on an
``unlimited_ocr_text`` configuration, the text decoder of ``UnlimitedOcrForConditionalGeneration``):
multi-head attention (no latent), dense first layers (``mlp_layer_types``), then DeepSeek-style
SwiGLU experts chosen by a softmax router (greedy or group-limited top-k, not renormalised; no score
bias) plus a plain shared expert of n_shared_experts × moe_intermediate_size.

Its layers are ``reference_sliding_attention`` (``UnlimitedOcrDynamicReferenceSlidingWindowLayer``):
every prompt token attends causally to the whole prompt, and decoded tokens to the prompt plus the
last ``sliding_window`` decoded ones. symgpt counts them as full causal attention: the forward over
a prompt as transformers computes it; the decode cache's bound (prompt + window) is not modelled.

transformers has no causal-LM class for this configuration alone: the decoder is read only as the
text_config of Unlimited-OCR (``vlm_held_moe.py``).
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .exaone_moe import dense_prefix
from .fields import Fields, Reader, llama_like

FAMILIES = (decoder_family(
    "unlimited_ocr_text", "Unlimited-OCR (text): multi-head attention, dense first layers, then softmax-routed "
    "SwiGLU experts plus a shared expert", gqa=True, moe=True, router="softmax", topk_norm=False,
    shared_expert="plain", dense_layers=1),)

_RSWA = ("the reference_sliding_attention layers are counted as full causal attention: exact for the forward over "
         "a prompt (transformers attends over the whole prompt); the decode cache's bound (prompt + sliding_window "
         "decoded tokens) is not modelled: the KV cache counted grows with every decoded token")


def read(f: Fields):
    """transformers' UnlimitedOcrTextConfig."""
    f.rename({"num_experts": "n_routed_experts"})
    flags, sizes = llama_like(f, dict(V=129280, d=1280, d_ff=6848, L=12, h=10, h_kv=10, T_max=32768,
                                      head_dim=128))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    if f.bool("mlp_bias", False):
        raise SymgptError(f"{f.where}: mlp_bias=true is not modelled for Unlimited-OCR")
    L = sizes["L"]
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is not None and (not isinstance(types, list) or len(types) != L
                              or not set(types) <= {"reference_sliding_attention", "full_attention"}):
        raise SymgptError(f"{f.where}: layer_types other than reference_sliding_attention or full_attention "
                          "layers are not modelled")
    if types is None or "reference_sliding_attention" in types:
        f.notes.append(_RSWA)
    dense = dense_prefix(f, L, 1, first_k_key=None)
    flags["dense_layers"], flags["dense_ff"] = (dense, sizes["d_ff"]) if dense else (None, None)
    sizes["d_ff"] = f.int("moe_intermediate_size", 896)
    sizes["E"] = f.int("n_routed_experts", 64)
    sizes["k"] = f.int("num_experts_per_tok", 6)
    flags["shared_ff"] = f.int("n_shared_experts", 2) * sizes["d_ff"]
    method = f.str("topk_method", "greedy")
    if method not in ("greedy", "group_limited_greedy"):
        raise SymgptError(f"{f.where}: topk_method {method[:30]!r} is not modelled (greedy, group_limited_greedy)")
    # group-limited routing, its scale and the cache's window: no parameters, no matmul
    f.silent("n_group", "topk_group", "routed_scaling_factor", "sliding_window", "pretraining_tp")
    return "unlimited_ocr_text", flags, sizes


TEXT_READERS = {"unlimited_ocr_text": Reader(read, ())}
# its config.json is read only as Unlimited-OCR's text_config (vlm_held_moe.py): no reader of its own
READERS: dict = {}
PRESETS: tuple = ()
