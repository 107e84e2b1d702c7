"""T5 (Raffel et al. 2020) and T5 v1.1: an encoder-decoder with RMSNorm, a relative position bias
and cross-attention (``blocks/t5.py`` builds it). T5 v1.1 checkpoints keep an untied head
(``tie_word_embeddings: false``): a config read from config.json is counted as the config and the
checkpoint say; transformers 5 ties T5's head whatever ``tie_word_embeddings`` says (that field
only decides the d^-1/2 rescale): ``tied=true`` counts that model."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {
    "tied": True,             # the LM head is the shared embedding
    "head_scale": True,       # the decoder output is rescaled by d^-1/2 before the head (v1.0)
    "ffn": "mlp",             # mlp (ReLU, v1.0) | gated (gated-GELU, v1.1)
    "activation": "relu",     # relu | gelu_new | gelu_tanh | gelu | silu
    "buckets": 32,            # relative_attention_num_buckets
    "head": "lm",             # lm (...ForConditionalGeneration) | none (...Model: the decoder's hidden states)
    "dropout": False,
    "loss": True,
}
CHOICES = {"head": ("lm", "none"), "ffn": ("mlp", "gated"),
           "activation": ("relu", "gelu_new", "gelu_tanh", "gelu", "silu")}
FLAG_HELP = {
    "tied": "the LM head shares the token embedding",
    "head_scale": "the decoder output is multiplied by d^-1/2 before the LM head (T5 v1.0; not v1.1)",
    "ffn": "mlp (wi, act, wo: T5 v1.0) or gated (wi_0, wi_1: T5 v1.1 gated-GELU)",
    "activation": "relu (v1.0), gelu_new (v1.1: transformers' tanh-GELU written out of elementwise "
                  "ops, which keeps four tensors for backward), gelu_tanh (the fused op), gelu or silu",
    "buckets": "relative position buckets (a (buckets, h) table per stack)",
    "head": "lm (the LM head and loss: ForConditionalGeneration) or none (the bare Model)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss over the T_dec positions",
}

FAMILIES = (Family(
    name="t5",
    description="T5 / T5 v1.1: encoder-decoder, RMSNorm, relative position bias, cross-attention",
    flags=FLAGS, sizes=("L", "L_dec", "d", "h", "d_head", "V", "d_ff"),
    build=Ref("symgpt.families.blocks.t5", "build"), flag_help=FLAG_HELP, choices=CHOICES),)

#: the transformers class -> the head counted (the first is the default)
HEADS = {"T5ForConditionalGeneration": "lm", "T5Model": "none"}


def read(f: Fields):
    """transformers' T5Config."""
    layers = f.aliased("num_layers", "num_hidden_layers", 6)
    sizes = {"V": f.int("vocab_size", 32128), "d": f.aliased("d_model", "hidden_size", 512),
             "d_head": f.aliased("d_kv", "head_dim", 64), "d_ff": f.int("d_ff", 2048), "L": layers,
             "h": f.aliased("num_heads", "num_attention_heads", 8)}
    dec = f.int("num_decoder_layers", None, optional=True)
    sizes["L_dec"] = dec if dec is not None else layers
    proj = f.str("feed_forward_proj", "relu")
    parts = proj.split("-")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated"):
        raise SymgptError(f"{f.where}: feed_forward_proj {proj!r} is not 'ACT' or 'gated-ACT'")
    act = "gelu_new" if proj == "gated-gelu" else parts[-1]  # transformers' backward-compatible reading
    f.used.update({"dense_act_fn", "is_gated_act", "n_positions", "relative_attention_max_distance",
                   "dropout_rate", "initializer_factor", "output_past", "classifier_dropout"})
    tie = f.bool("tie_word_embeddings", None)
    # transformers' "gelu_new" is its own composite tanh-GELU (same function, more tensors saved)
    flags = {"ffn": "gated" if len(parts) == 2 else "mlp",
             "activation": "gelu_new" if act == "gelu_new" else f.activation_named("feed_forward_proj", act),
             "buckets": f.int("relative_attention_num_buckets", 32),
             # tie_word_embeddings=false: an own LM head (config.json and the checkpoint) and no rescale
             "tied": tie is not False, "head_scale": tie is not False,
             "head": HEADS.get(f.architecture, "lm")}
    if tie is False:
        f.notes.append("tie_word_embeddings=false: the LM head is its own V x d matrix, as config.json says "
                       "and the checkpoint holds; transformers 5's T5ForConditionalGeneration ties it to the "
                       "shared embedding whatever the field says (only the d^-1/2 rescale goes): set "
                       "tied=true to count that model")
    return "t5", flags, sizes


READERS = {"t5": Reader(read, tuple(HEADS))}

_HF = "its config.json on the Hugging Face Hub"

PRESETS = (
    Preset("t5-small", "t5", {"L": 6, "L_dec": 6, "h": 8, "d_head": 64, "d": 512, "d_ff": 2048, "V": 32128},
           source="Raffel et al. 2020 (T5), Sec. 3.7; google-t5/t5-small " + _HF,
           note="the paper says 60M; the vocabulary is 32,128 rows (32,000 pieces padded)"),
    Preset("t5-base", "t5", {"L": 12, "L_dec": 12, "h": 12, "d_head": 64, "d": 768, "d_ff": 3072, "V": 32128},
           source="Raffel et al. 2020 (T5), Sec. 3.7; google-t5/t5-base " + _HF, note="the paper says 220M"),
)
