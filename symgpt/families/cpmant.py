"""CPM-Ant (OpenBMB, openbmb/cpm-ant-10b; transformers' CpmAntForCausalLM): a pre-norm decoder
with RMSNorm, multi-head attention with a relative position bias over segment pairs and
positions (one table for every layer), segment embeddings, a GELU-gated FFN, no biases, and
``prompt_length`` learned prompt positions run before the tokens (``blocks/cpmant.py``). Its
LM head is its own matrix (transformers ties none of CpmAntForCausalLM's weights, whatever
``tie_word_embeddings`` says)."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

FLAGS = {"activation": "gelu", "prompt_length": 32, "prompt_types": 32, "segment_types": 32, "buckets": 512,
         "dropout": False, "loss": True}
FLAG_HELP = {
    "activation": "the FFN gate's activation (CpmAntDenseGatedACT: nn.GELU, the exact GELU)",
    "prompt_length": "prompt positions run before the tokens (and dropped before the LM head)",
    "prompt_types": "prompt kinds: the token table has V + prompt_types·prompt_length rows",
    "segment_types": "segment kinds: a segment embedding table, and segment_types² buckets of the position bias",
    "buckets": "relative position buckets (position_bias_num_buckets)",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss",
}

FAMILIES = (Family(
    name="cpmant",
    description="CPM-Ant: RMSNorm decoder with segment embeddings, a segment/position relative bias, GELU-gated "
                "FFN, prompt positions before the tokens",
    flags=FLAGS, sizes=("L", "d", "h", "d_head", "d_ff", "V"), optional=(),
    build=partial(Ref("symgpt.families.blocks.cpmant", "build"), name="cpmant"), flag_help=FLAG_HELP,
    choices={"activation": ("gelu", "gelu_tanh", "silu", "relu")}),)


def read(f: Fields):
    """transformers' CpmAntConfig."""
    sizes = {"V": f.int("vocab_size", 30720), "d": f.int("hidden_size", 4096), "h": f.int("num_attention_heads", 32),
             "d_head": f.int("dim_head", 128), "d_ff": f.int("dim_ff", 10240), "L": f.int("num_hidden_layers", 48)}
    flags = {"prompt_length": f.int("prompt_length", 32), "prompt_types": f.int("prompt_types", 32),
             "segment_types": f.int("segment_types", 32), "buckets": f.int("position_bias_num_buckets", 512)}
    dropout, _ = f.get("dropout_p", 0.0)
    if dropout is not None and (isinstance(dropout, bool) or not isinstance(dropout, (int, float))):
        raise SymgptError(f"{f.where}: field 'dropout_p' must be a number or null")
    flags["dropout"] = bool(dropout)
    f.silent("position_bias_max_distance", "eps", "tie_word_embeddings")
    return "cpmant", flags, sizes


READERS = {"cpmant": Reader(read, ("CpmAntForCausalLM",))}

PRESETS = ()
