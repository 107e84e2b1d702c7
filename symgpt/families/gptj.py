"""GPT-J (Wang and Komatsuzaki 2021) and CodeGen (Nijkamp et al. 2022): attention and MLP in
parallel on one LayerNorm, rotary positions on the first ``rotary_dim`` dimensions of each head,
no attention biases, an MLP with biases and an LM head with a bias (transformers'
``GPTJForCausalLM``, ``CodeGenForCausalLM``; CodeGen fuses Q/K/V into one projection)."""

from __future__ import annotations

from fractions import Fraction

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader

_FLAGS = dict(norm="layernorm", parallel=True, shared_norm=True, ffn="mlp", activation="gelu_new",
              mlp_bias=True, head_bias=True)

FAMILIES = (
    decoder_family("gptj", "GPT-J: parallel attention and MLP on one LayerNorm, partial rotary (rotary_dim), "
                   "no attention biases, an LM head with a bias", rotary_pct=25, **_FLAGS),
    decoder_family("codegen", "CodeGen: GPT-J's block with one fused Q/K/V projection",
                   rotary_pct=25, fused_qkv=True, **_FLAGS),
)


def _read(f: Fields, name: str):
    """GPTJConfig / CodeGenConfig (the same fields; CodeGen's ``n_ctx`` is unused)."""
    sizes = {"V": f.int("vocab_size", 50400), "T_max": f.aliased("n_positions", "max_position_embeddings", 2048),
             "d": f.aliased("n_embd", "hidden_size", 4096), "L": f.aliased("n_layer", "num_hidden_layers", 28),
             "h": f.aliased("n_head", "num_attention_heads", 16)}
    if name == "codegen":
        f.int("n_ctx", 2048)
    inner = f.int("n_inner", None, optional=True)
    if inner is not None:
        sizes["d_ff"] = inner
    if sizes["d"] % sizes["h"]:
        raise SymgptError(f"{f.where}: n_embd {sizes['d']} is not a multiple of n_head {sizes['h']}")
    rot = f.int("rotary_dim", 64, optional=True)
    if rot is None:
        raise SymgptError(f"{f.where}: rotary_dim=null (rotary over the whole width) is not modelled")
    frac = Fraction(rot, sizes["d"] // sizes["h"]) * 100
    if frac > 100 or frac.denominator != 1:
        raise SymgptError(f"{f.where}: rotary_dim {rot} is not a whole percentage of the head dimension "
                          f"{sizes['d'] // sizes['h']}")
    flags = {"tied": f.bool("tie_word_embeddings", False),
             "activation": f.activation("activation_function", "gelu_new"),
             "rotary_pct": None if frac == 100 else int(frac)}
    return name, flags, sizes


READERS = {"gptj": Reader(lambda f: _read(f, "gptj"), ("GPTJForCausalLM",)),
           "codegen": Reader(lambda f: _read(f, "codegen"), ("CodeGenForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()
