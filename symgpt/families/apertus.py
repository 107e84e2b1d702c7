"""Apertus (Swiss AI 2025, "Apertus: Democratizing Open and Compliant LLMs"; transformers'
``ApertusForCausalLM``, ``Apertus1p5TextForCausalLM``): LLaMA's block with a two-matrix up/down
MLP whose activation is xIELU (arXiv:2411.13010; two learned one-element parameters in every
layer's MLP) and an RMSNorm on each query and key head."""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

FAMILIES = (
    decoder_family("apertus", "Apertus: an up/down MLP with xIELU (two learned scalars per layer), an RMSNorm "
                   "on each query and key head", ffn="mlp", activation="xielu", qk_norm="head"),
)


def _read(f: Fields, vocab: int):
    flags, sizes = llama_like(f, dict(V=vocab, d=4096, d_ff=14336, L=32, h=32, T_max=65536, act="xielu"))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head")
    return "apertus", flags, sizes


def read_apertus(f: Fields):
    """transformers' ApertusConfig."""
    return _read(f, 131072)


def read_apertus1p5_text(f: Fields):
    """transformers' Apertus1p5TextConfig: Apertus with a larger vocabulary and an optionally
    pruned LM head (``output_vocab_size`` rows), which is not modelled."""
    out = f.int("output_vocab_size", None, optional=True)
    found = _read(f, 266752)
    if out is not None and out != found[2]["V"]:
        raise SymgptError(f"{f.where}: an LM head pruned to output_vocab_size rows ({out}) of a {found[2]['V']}-token "
                          "vocabulary is not modelled")
    return found


READERS = {"apertus": Reader(read_apertus, ("ApertusForCausalLM",)),
           "apertus1p5_text": Reader(read_apertus1p5_text, ("Apertus1p5TextForCausalLM",))}

PRESETS: tuple[Preset, ...] = ()
