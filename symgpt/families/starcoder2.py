"""StarCoder2 (Lozhkov et al. 2024): LayerNorm, a GELU MLP, biases everywhere, grouped-query
attention, a tied head."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like, window

FAMILIES = (decoder_family(
    "starcoder2", "StarCoder2: LayerNorm, GELU MLP, biases everywhere, GQA, tied head",
    norm="layernorm", ffn="mlp", activation="gelu_tanh", qkv_bias=True, proj_bias=True, mlp_bias=True,
    gqa=True, tied=True),)


def read(f: Fields):
    """transformers' Starcoder2Config."""
    flags, sizes = llama_like(f, dict(V=49152, d=3072, d_ff=12288, L=30, h=24, h_kv=2, T_max=4096,
                                      act="gelu_pytorch_tanh", tied=True))
    bias = f.bool("use_bias", True)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=bias)
    window(f, flags, sizes, None)
    if f.str("norm_type", "layer_norm") != "layer_norm" or f.str("mlp_type", "default") != "default":
        raise SymgptError(f"{f.where}: only StarCoder2's layer_norm and default MLP are modelled")
    f.silent("norm_epsilon", "layer_norm_epsilon", "embedding_dropout", "residual_dropout")
    return "starcoder2", flags, sizes


READERS = {"starcoder2": Reader(read, ("Starcoder2ForCausalLM",))}

PRESETS = (
    Preset("starcoder2-3b", "starcoder2",
           {"L": 30, "h": 24, "h_kv": 2, "d": 3072, "d_ff": 12288, "V": 49152, "T_max": 16384, "W": 4096},
           flags={"window": True},
           source="Lozhkov et al. 2024 (StarCoder 2); bigcode/starcoder2-3b its config.json on the Hugging Face Hub",
           note="3,030,371,328 parameters; published: 3B"),
)
