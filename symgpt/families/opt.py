"""OPT (Zhang et al. 2022): learned positions with 2 extra rows, ReLU MLP, LayerNorm, biases, a
tied head; OPT-350m's post-norm blocks and 512-wide embeddings projected in and out."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader

FAMILIES = (decoder_family(
    "opt", "OPT: learned positions with 2 extra rows, ReLU MLP, LayerNorm, biases, tied head",
    norm="layernorm", ffn="mlp", activation="relu", positions="learned", pos_offset=2, qkv_bias=True,
    proj_bias=True, mlp_bias=True, tied=True),)


def read(f: Fields):
    """transformers' OPTConfig."""
    d = f.int("hidden_size", 768)
    sizes = {"V": f.int("vocab_size", 50272), "d": d, "L": f.int("num_hidden_layers", 12),
             "h": f.int("num_attention_heads", 12), "d_ff": f.int("ffn_dim", 3072),
             "T_max": f.int("max_position_embeddings", 2048)}
    if not f.bool("layer_norm_elementwise_affine", True):
        raise SymgptError(f"{f.where}: layer_norm_elementwise_affine=false (LayerNorms without "
                          "parameters) is not supported")
    before = f.bool("do_layer_norm_before", True)
    proj = f.int("word_embed_proj_dim", None, optional=True)
    bias = f.bool("enable_bias", True)
    flags = {"tied": f.bool("tie_word_embeddings", True),
             "activation": f.activation("activation_function", "relu"),
             "post_norm": not before, "final_norm": before and not f.bool("_remove_final_layer_norm", False),
             "embed_dim": proj if proj not in (None, d) else None,
             "qkv_bias": bias, "proj_bias": bias, "mlp_bias": bias}
    return "opt", flags, sizes


READERS = {"opt": Reader(read, ("OPTForCausalLM",))}

PRESETS = (
    Preset("opt-125m", "opt",
           {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 50272, "T_max": 2048},
           source="Zhang et al. 2022 (OPT), Table 1; facebook/opt-125m its config.json on the Hugging Face Hub",
           note="the learned position table has T_max + 2 rows (OPT's offset)"),
)
