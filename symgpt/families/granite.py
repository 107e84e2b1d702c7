"""Granite 3 (IBM 2024, ibm-granite/granite-3.3-8b-instruct): LLaMA's block with the scalar
multipliers of its training recipe (transformers' GraniteForCausalLM): the embeddings times
``embedding_multiplier``, each branch output times ``residual_multiplier`` before its residual
add, the logits divided by ``logits_scaling``, and ``attention_multiplier`` as the score scale
in place of 1/sqrt(d_head). None has parameters or a matmul."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader
from .llama import read_llama_like

FAMILIES = (decoder_family("granite", "Granite: LLaMA's block with scalar embedding, residual, logit and "
                           "attention multipliers"),)


def multipliers(f: Fields, keys: tuple[str, ...], model: str) -> None:
    """Read the scalar multipliers *keys* (each a number, or null where the class allows it) and
    note the elementwise products they add, which symgpt does not count."""
    for key in keys:
        value, _ = f.get(key, 1.0)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise SymgptError(f"{f.where}: field {key!r} must be a number, got {value!r}")
    f.notes.append(f"{model} multiplies the embeddings, each branch output and the logits by scalars "
                   "(embedding_multiplier, residual_multiplier, logits_scaling): elementwise products "
                   "not counted (no parameters, no matmul); attention_multiplier is the score scale")


#: the multipliers of GraniteConfig (and of the Granite MoE and HyperCLOVA X configs)
MULTIPLIERS = ("embedding_multiplier", "residual_multiplier", "logits_scaling", "attention_multiplier")


def read(f: Fields):
    """transformers' GraniteConfig."""
    flags, sizes = read_llama_like(f, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    multipliers(f, MULTIPLIERS, "Granite")
    return "granite", flags, sizes


READERS = {"granite": Reader(read, ("GraniteForCausalLM",))}

PRESETS = (
    Preset("granite-3.3-8b", "granite",
           {"L": 40, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 12800, "V": 49159, "T_max": 131072},
           flags={"tied": True},
           source="IBM 2025 (Granite 3.3 model card); ibm-granite/granite-3.3-8b-instruct its config.json on "
                  "the Hugging Face Hub",
           note="8,170,864,640 parameters; published: 8B. Its multipliers (embeddings x 12, branch outputs "
                "x 0.22, logits / 16, scores x 1/128) are elementwise products not counted"),
)
