"""GPT-2's builder: the generic decoder (``decoder.py``) with GPT-2's architecture fixed (LayerNorm,
learned positions, a tanh-GELU MLP of width 4d, a fused Q/K/V projection) and GPT-2's own flag
vocabulary, as nanoGPT and the GPT-2 config name them: ``bias`` (false removes every linear and
LayerNorm bias), ``qkv_bias``, ``tied``, ``vocab_multiple``, ``dropout``, ``loss``. Each is an alias
of decoder flags (:func:`gpt2_flags`); its node paths and labels are GPT-2's. The family itself
(flags, sizes, reader, presets) is ``symgpt.families.gpt2``.
"""

from __future__ import annotations

from .decoder import build as build_decoder
from .decoder_flags import FLAGS

#: the decoder flags GPT-2's architecture fixes
GPT2_ARCHITECTURE = {"norm": "layernorm", "positions": "learned", "ffn": "mlp",
                     "activation": "gelu_new", "fused_qkv": True}

#: GPT-2's names for the nodes the decoder labels generically (the diagram shows them)
GPT2_LABELS = {"blocks/norms/attention": "LayerNorm_1", "blocks/norms/ffn": "LayerNorm_2",
               "final_norm": "LayerNorm_final"}


def gpt2_flags(flags) -> dict:
    """GPT-2's flags as the decoder's: ``bias=false`` clears the Q/K/V, output-projection, MLP
    and LayerNorm biases; ``qkv_bias`` the Q/K/V projection's alone; the rest pass through."""
    bias = bool(flags["bias"])
    return {**FLAGS, **GPT2_ARCHITECTURE,
            "qkv_bias": bias and bool(flags["qkv_bias"]), "proj_bias": bias, "mlp_bias": bias,
            "norm_bias": bias, "tied": flags["tied"], "vocab_multiple": flags["vocab_multiple"],
            "dropout": flags["dropout"], "loss": flags["loss"]}


def build(flags, bound, sizes):
    """GPT-2's graph; only the family's own *sizes* shape it (a bound h_kv or d_head does not make
    it GQA)."""
    mine = frozenset(n for n in bound if n in sizes)
    return build_decoder(gpt2_flags(flags), mine, name="gpt2", labels=GPT2_LABELS)
