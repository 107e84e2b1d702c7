"""RWKV-4 language models (Peng et al. 2023, "RWKV: Reinventing RNNs for the Transformer Era"),
read from transformers' RwkvConfig and counted as ``RwkvForCausalLM`` (``blocks/rwkv.py`` builds
them; the recurrence is ``symgpt.ops.rwkv.WKV``).

Counting convention of the recurrence (stated on every answer's op descriptions): the sequential
loop of transformers' PyTorch path (``rwkv_linear_attention_cpu``): no matmul, all elementwise. At
inference each block keeps a state of fixed size (``ops.rwkv``: five vectors of width d per
sequence, the two token shifts' last inputs, the WKV's numerator, denominator and running
maximum), not a KV cache.
"""

from __future__ import annotations

from functools import partial

from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader

FLAGS = {"tied": False, "activation": "relu2", "loss": True}
CHOICES = {"activation": ("relu2",)}
FLAG_HELP = {
    "activation": "the channel-mix key's activation (relu², fixed by RwkvFeedForward)",
    "tied": "the LM head is the token embedding (tie_word_embeddings)",
    "loss": "the cross-entropy loss of training",
}
_BUILD = Ref("symgpt.families.blocks.rwkv", "build")

FAMILIES = (
    Family(name="rwkv", description="RWKV-4: LayerNorm pre-norm blocks of a time-mix (token shift, key/value/"
                                    "receptance projections, the WKV recurrence) and a channel-mix (token shift, "
                                    "squared-ReLU key, sigmoid receptance), no attention",
           flags=FLAGS, sizes=("V", "d", "L", "d_inner", "d_ff"), optional=("T_max",),
           build=partial(_BUILD, name="rwkv"), flag_help=FLAG_HELP, choices=CHOICES),
)


def read_rwkv(f: Fields):
    """transformers' RwkvConfig: ``attention_hidden_size`` (default hidden_size) is the time-mix
    width, ``intermediate_size`` (default 4·hidden_size) the channel-mix width."""
    f.rename({"max_position_embeddings": "context_length"})
    d = f.int("hidden_size", 4096)
    attn = f.int("attention_hidden_size", None, optional=True)
    ff = f.int("intermediate_size", None, optional=True)
    sizes = {"V": f.int("vocab_size", 50277), "d": d, "L": f.int("num_hidden_layers", 32),
             "d_inner": attn if attn is not None else d, "d_ff": ff if ff is not None else 4 * d}
    # context_length: the longest sequence the CUDA kernel takes (no count; kept as T_max)
    sizes["T_max"] = f.int("context_length", 1024)
    if sizes["d_inner"] != d:
        f.notes.append("RWKV: the WKV's inference state is priced at attention_hidden_size; transformers' RwkvModel "
                       "sizes it at hidden_size and cannot decode with a cache when the two differ")
    flags = {"tied": f.bool("tie_word_embeddings", False)}
    # the inference-time rescaling of every rescale_every-th block (weights divided, hidden states
    # halved: elementwise, no matmul): no count
    f.silent("rescale_every")
    return "rwkv", flags, sizes


READERS = {"rwkv": Reader(read_rwkv, ("RwkvForCausalLM",))}

PRESETS = ()
