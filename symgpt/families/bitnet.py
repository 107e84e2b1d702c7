"""BitNet b1.58 (Ma et al. 2024, "The Era of 1-bit LLMs"; Microsoft's BitNet b1.58 2B4T model card;
transformers' ``BitNetForCausalLM``): LLaMA's block with a squared-ReLU gated FFN and two
sub-norms, an RMSNorm of the merged heads before the attention output projection
(``attn_sub_norm``) and one of the FFN's hidden activations before its down projection
(``ffn_sub_norm``).

transformers builds its linear layers as ordinary ``nn.Linear`` weights (one element per weight,
in the model's dtype), which is what symgpt counts. A config with a ``quantization_config`` is
refused: transformers then swaps the linear layers for its BitNet integration's ``BitLinear``
(ternary weights packed four to a byte, held as buffers) or ``AutoBitLinear``, whose weights and
bytes are not modelled."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (
    decoder_family("bitnet", "BitNet b1.58: squared-ReLU gated FFN, RMSNorms before the attention output and the "
                   "FFN down projections", activation="relu2", gqa=True,
                   added={"sub_norms": True},
                   added_help={"sub_norms": "a norm of the merged heads before the attention output projection and "
                                            "of the FFN's hidden activations before its down projection "
                                            "(attn_sub_norm, ffn_sub_norm)"}),
)


def read(f: Fields):
    """transformers' BitNetConfig (linear layers as plain weights)."""
    quant, _ = f.get("quantization_config", None)
    if quant is not None:
        raise SymgptError(f"{f.where}: quantization_config (BitNet's packed ternary weights) is not modelled; "
                          "symgpt counts the plain linear weights transformers builds without it")
    flags, sizes = llama_like(f, dict(V=128256, d=2560, d_ff=6912, L=30, h=20, h_kv=5, T_max=2048, act="relu2"))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, sub_norms=True)
    return "bitnet", flags, sizes


READERS = {"bitnet": Reader(read, ("BitNetForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()
