"""HyperCLOVA X (NAVER Cloud 2025; transformers' HyperCLOVAXForCausalLM): LLaMA's block with
Peri-LN (Kim et al. 2025, arXiv:2502.02732) -- a norm before each branch and another on its output
(``use_post_norm``) -- and Granite's scalar multipliers (the logits multiplied by
``logits_scaling``)."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader
from .granite import MULTIPLIERS, multipliers
from .llama import read_llama_like

FAMILIES = (decoder_family("hyperclovax", "HyperCLOVA X: LLaMA's block with Peri-LN (norms before and after "
                           "each branch) and scalar multipliers", branch_norms=True),)


def read(f: Fields):
    """transformers' HyperCLOVAXConfig."""
    flags, sizes = read_llama_like(f, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    flags["branch_norms"] = f.bool("use_post_norm", True)
    multipliers(f, MULTIPLIERS, "HyperCLOVA X")
    return "hyperclovax", flags, sizes


READERS = {"hyperclovax": Reader(read, ("HyperCLOVAXForCausalLM",))}

PRESETS = ()
