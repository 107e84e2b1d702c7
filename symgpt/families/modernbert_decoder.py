"""ModernBERT's decoder (transformers' ``ModernBertDecoderForCausalLM``, Warner et al. 2024,
"Smarter, Better, Faster, Longer"): token embeddings and a LayerNorm; pre-norm layers of
multi-head attention with RoPE and a GeGLU FFN (``Wi``: d -> 2·d_ff split into the input and its
gate, ``Wo``), LayerNorms without shifts by default; the first layer has no norm before its
attention; full-attention layers (one in every ``global_attn_every_n_layers``, from the first)
among sliding-window ones of ``local_attention // 2`` keys, each kind with its own rotary table;
a final norm and the prediction head (a dense layer, its activation and a norm) before the decoder,
tied to the token embeddings with a bias of its own. Each layer kind is its own stack
(``blocks/kinds.py``)."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader

_ACTS = ("silu", "gelu", "gelu_tanh", "gelu_new", "relu")
ADDED = {"full_layers": 8, "first_bare": True, "head_transform": True, "head_transform_bias": False,
         "head_activation": "gelu"}
ADDED_HELP = {
    "full_layers": "with window: how many layers are full-attention (the first included), the others "
                   "sliding-window (8: ModernBertDecoderConfig's 22 layers, one in every 3 full)",
    "first_bare": "the first layer has no norm before its attention (a full-attention layer)",
    "head_transform": "the LM head has a dense layer d -> d, an activation and a norm before the decoder",
    "head_transform_bias": "that dense layer has a bias (classifier_bias)",
    "head_activation": "that dense layer's activation (classifier_activation)",
}
_BUILD = Ref("symgpt.families.blocks.kinds", "build")

FAMILIES = (
    Family(name="modernbert_decoder",
           description="ModernBERT decoder: pre-norm MHA with RoPE and GeGLU, the first layer without an attention "
                       "norm, full-attention layers among sliding-window ones, a prediction head before the tied "
                       "decoder",
           flags=Extended(FLAGS, {"norm": "layernorm", "norm_bias": False, "ffn": "gated", "fused_gate_up": True,
                                  "activation": "gelu", "tied": True, "embed_norm": True, "head_bias": True,
                                  "window": True, "local_rope": True}, ADDED),
           sizes=SIZES, optional=OPTIONAL, build=partial(_BUILD, name="modernbert_decoder"),
           flag_help=Extended(FLAG_HELP, added=ADDED_HELP),
           choices=Extended(CHOICES, added={"head_activation": _ACTS})),
)


def read_modernbert_decoder(f: Fields):
    """transformers' ModernBertDecoderConfig: the window is ``local_attention // 2`` whatever
    ``sliding_window`` says (the config sets it so); ``global_attn_every_n_layers`` (default 3)
    makes the layer pattern when ``layer_types`` is absent."""
    sizes = {"V": f.int("vocab_size", 50368), "d": f.int("hidden_size", 768),
             "d_ff": f.int("intermediate_size", 1152), "L": f.int("num_hidden_layers", 22),
             "h": f.int("num_attention_heads", 12), "T_max": f.int("max_position_embeddings", 8192)}
    if sizes["d"] % sizes["h"]:
        raise SymgptError(f"{f.where}: hidden_size {sizes['d']} is not a multiple of num_attention_heads {sizes['h']}")
    L = sizes["L"]
    p = f.int("global_attn_every_n_layers", 3)
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None:
        types = ["sliding_attention" if i % p else "full_attention" for i in range(L)]
    elif not isinstance(types, list) or len(types) != L or \
            not all(t in ("full_attention", "sliding_attention") for t in types):
        raise SymgptError(f"{f.where}: field 'layer_types' must list 'full_attention' or 'sliding_attention' "
                          f"for each of the {L} layers")
    if types[0] != "full_attention":
        raise SymgptError(f"{f.where}: the first layer (no attention norm) is sliding-window: not modelled")
    flags = {"tied": f.bool("tie_word_embeddings", True), "norm_bias": f.bool("norm_bias", False),
             "activation": f.activation("hidden_activation", "gelu"),
             "mlp_bias": f.bool("mlp_bias", False), "head_bias": f.bool("decoder_bias", True),
             "head_transform_bias": f.bool("classifier_bias", False),
             "head_activation": f.activation("classifier_activation", "gelu")}
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    flags["window"] = "sliding_attention" in types
    flags["full_layers"] = types.count("full_attention") if flags["window"] else None
    if flags["window"]:
        local = f.int("local_attention", 128, optional=True)
        if not local or local < 2:
            raise SymgptError(f"{f.where}: sliding_attention layers need a 'local_attention' of at least 2")
        sizes["W"] = local // 2
    else:
        f.silent("local_attention")
    # numerics, initialisation, dropout, token ids and the window field the config overwrites: no count
    f.silent("norm_eps", "initializer_cutoff_factor", "embedding_dropout", "mlp_dropout",
             "cls_token_id", "sliding_window", "classifier_activation")
    return "modernbert_decoder", flags, sizes


READERS = {"modernbert-decoder": Reader(read_modernbert_decoder, ("ModernBertDecoderForCausalLM",))}

PRESETS = ()
