"""Pre-LN decoders with fixed or offset positions and token embeddings scaled by √d.

XGLM (Lin et al. 2022; transformers' ``XGLMForCausalLM``): sinusoidal positions, a GELU MLP,
LayerNorms and biases, a tied head. CTRL (Keskar et al. 2019; ``CTRLLMHeadModel``): sinusoidal
positions, a ReLU MLP, a tied head with a bias. BioGPT (Luo et al. 2022; ``BioGptForCausalLM``):
OPT's learned positions (two extra rows, ids from the attention mask), a GELU MLP, a tied head."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader

_PRE_LN = dict(norm="layernorm", ffn="mlp", qkv_bias=True, proj_bias=True, mlp_bias=True, tied=True,
               embed_scale=True)

FAMILIES = (
    decoder_family("xglm", "XGLM: sinusoidal positions, embeddings scaled by sqrt(d), pre-LN, GELU MLP, tied head",
                   positions="sinusoidal", activation="gelu", **_PRE_LN),
    decoder_family("ctrl", "CTRL: sinusoidal positions, embeddings scaled by sqrt(d), pre-LN, ReLU MLP, "
                   "tied head with a bias", positions="sinusoidal", activation="relu", head_bias=True, **_PRE_LN),
    decoder_family("biogpt", "BioGPT: OPT's learned positions, embeddings scaled by sqrt(d), pre-LN, GELU MLP, "
                   "tied head", positions="learned", pos_offset=2, activation="gelu", **_PRE_LN),
)


def read_xglm(f: Fields):
    """transformers' XGLMConfig."""
    sizes = {"V": f.int("vocab_size", 256008), "d": f.aliased("d_model", "hidden_size", 1024),
             "d_ff": f.int("ffn_dim", 4096), "L": f.aliased("num_layers", "num_hidden_layers", 24),
             "h": f.aliased("attention_heads", "num_attention_heads", 16)}
    sizes["T_max"] = f.int("max_position_embeddings", 2048)  # the sinusoidal table's length: no parameters
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true is not supported")
    flags = {"tied": f.bool("tie_word_embeddings", True), "embed_scale": f.bool("scale_embedding", True),
             "activation": f.activation("activation_function", "gelu")}
    return "xglm", flags, sizes


def read_ctrl(f: Fields):
    """transformers' CTRLConfig."""
    sizes = {"V": f.int("vocab_size", 246534), "d": f.aliased("n_embd", "hidden_size", 1280),
             "d_ff": f.int("dff", 8192), "L": f.aliased("n_layer", "num_hidden_layers", 48),
             "h": f.aliased("n_head", "num_attention_heads", 16)}
    sizes["T_max"] = f.aliased("n_positions", "max_position_embeddings", 256)  # the sinusoidal table's length
    f.int("n_ctx", None, optional=True)
    return "ctrl", {"tied": f.bool("tie_word_embeddings", True)}, sizes


def read_biogpt(f: Fields):
    """transformers' BioGptConfig."""
    sizes = {"V": f.int("vocab_size", 42384), "d": f.int("hidden_size", 1024),
             "d_ff": f.int("intermediate_size", 4096), "L": f.int("num_hidden_layers", 24),
             "h": f.int("num_attention_heads", 16), "T_max": f.int("max_position_embeddings", 1024)}
    flags = {"tied": f.bool("tie_word_embeddings", True), "embed_scale": f.bool("scale_embedding", True),
             "activation": f.activation("hidden_act", "gelu")}
    f.silent("hidden_dropout_prob", "attention_probs_dropout_prob")  # noted when set
    return "biogpt", flags, sizes


READERS = {"xglm": Reader(read_xglm, ("XGLMForCausalLM",)),
           "ctrl": Reader(read_ctrl, ("CTRLLMHeadModel",)),
           "biogpt": Reader(read_biogpt, ("BioGptForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()
