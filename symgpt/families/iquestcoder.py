"""IQuest-Coder-V1 (IQuest, IQuestLab/IQuest-Coder-V1-40B-Instruct): the LLaMA architecture under
another name; transformers' ``iquestcoder`` builds ``LlamaForCausalLM``."""

from __future__ import annotations

from ..core.errors import SymgptError
from .decoders import decoder_family
from .fields import Fields, Reader
from .llama import read_llama_like

FAMILIES = (decoder_family("iquestcoder", "IQuest-Coder: the LLaMA architecture (transformers builds LlamaForCausalLM)",
                           gqa=True),)


def read(f: Fields):
    """transformers' IQuestCoderConfig."""
    flags, sizes = read_llama_like(f, dict(V=76800, d=5120, d_ff=27648, L=80, h=40, h_kv=8, T_max=131072,
                                           head_dim=128))
    # transformers refuses these two (IQuestCoderConfig.validate_architecture)
    if f.get("clip_qkv", None)[0] is not None:
        raise SymgptError(f"{f.where}: clip_qkv is not supported by IQuest-Coder (transformers refuses it)")
    if f.get("use_sliding_window", False)[0]:
        raise SymgptError(f"{f.where}: use_sliding_window is not supported by IQuest-Coder (transformers refuses it)")
    return "iquestcoder", flags, sizes


READERS = {"iquestcoder": Reader(read, ("LlamaForCausalLM",))}

PRESETS = ()
