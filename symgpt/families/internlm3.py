"""InternLM3 (Shanghai AI Laboratory, internlm/internlm3-8b-instruct): the LLaMA architecture
under another name; transformers' ``internlm3`` builds ``LlamaForCausalLM``."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader
from .llama import read_llama_like

FAMILIES = (decoder_family("internlm3", "InternLM3: the LLaMA architecture (transformers builds LlamaForCausalLM)",
                           gqa=True),)


def read(f: Fields):
    """transformers' InternLM3Config (its attribute_map: ``qkv_bias`` is ``attention_bias``,
    ``bias`` is ``mlp_bias``)."""
    f.rename({"qkv_bias": "attention_bias", "bias": "mlp_bias"})
    flags, sizes = read_llama_like(f, dict(V=128512, d=4096, d_ff=10240, L=48, h=32, h_kv=2, T_max=32768,
                                           head_dim=128))
    if flags["qkv_bias"] != flags["mlp_bias"]:
        # transformers refuses it: LLaMA's one bias setting covers the attention and the MLP
        raise SymgptError(f"{f.where}: attention_bias (qkv_bias) and mlp_bias (bias) must be equal "
                          "for InternLM3, as transformers requires")
    return "internlm3", flags, sizes


READERS = {"internlm3": Reader(read, ("LlamaForCausalLM",))}

PRESETS = ()
