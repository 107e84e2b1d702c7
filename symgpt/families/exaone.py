"""EXAONE 3.0 (LG AI Research 2024, arXiv:2408.03541): the LLaMA architecture under another name.
transformers' ExaoneConfig is LlamaConfig with EXAONE-3.0-7.8B's sizes, and ``exaone`` builds
``LlamaForCausalLM`` (its weight names are converted on loading)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader
from .llama import read_llama_like

FAMILIES = (decoder_family("exaone", "EXAONE 3.0: the LLaMA architecture (transformers builds LlamaForCausalLM)",
                           gqa=True),)


def read(f: Fields):
    """transformers' ExaoneConfig (LlamaConfig's fields, EXAONE's names through its attribute_map)."""
    f.rename({"num_layers": "num_hidden_layers", "layer_norm_epsilon": "rms_norm_eps",
              "activation_function": "hidden_act"})
    flags, sizes = read_llama_like(f, dict(V=102400, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=4096))
    return "exaone", flags, sizes


READERS = {"exaone": Reader(read, ("LlamaForCausalLM",))}

PRESETS = ()
