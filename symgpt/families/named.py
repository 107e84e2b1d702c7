"""The named decoder families: the generic decoder (``decoder.py``) with each architecture's
flag defaults. A family is a row of data; its flags can still be changed per model."""

from __future__ import annotations

from functools import partial

from .base import Family, register_family
from .decoder import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES, build

#: name -> (description, flag defaults that differ from the generic decoder's)
ROWS: dict[str, tuple[str, dict]] = {
    "decoder": ("generic decoder-only Transformer (pre-norm RMSNorm, RoPE, SwiGLU by default)", {}),
    "llama": ("LLaMA / Llama 2 / Llama 3: RMSNorm, RoPE, SwiGLU, GQA via h_kv, untied head", {}),
    "mistral": ("Mistral: LLaMA with GQA and sliding-window attention (W)",
                {"gqa": True, "window": True}),
    "mixtral": ("Mixtral: Mistral blocks with a mixture of E SwiGLU experts, top-k routing",
                {"gqa": True, "moe": True}),
    "qwen2": ("Qwen2: LLaMA with Q/K/V biases", {"gqa": True, "qkv_bias": True}),
    "gemma": ("Gemma: GeGLU (tanh GELU), embeddings scaled by sqrt(d), head_dim d_head, tied head",
              {"activation": "gelu_tanh", "embed_scale": True, "tied": True}),
    "phi3": ("Phi-3: LLaMA with fused QKV and fused gate/up projections",
             {"fused_qkv": True, "fused_gate_up": True}),
    "falcon": ("Falcon: parallel attention + GELU MLP, multi-query (h_kv), one shared LayerNorm",
               {"norm": "layernorm", "ffn": "mlp", "activation": "gelu", "fused_qkv": True,
                "parallel": True, "shared_norm": True, "tied": True, "gqa": True}),
    "gpt_neox": ("GPT-NeoX / Pythia: parallel residual, partial rotary (25%), LayerNorm, biases",
                 {"norm": "layernorm", "ffn": "mlp", "activation": "gelu", "fused_qkv": True,
                  "qkv_bias": True, "proj_bias": True, "mlp_bias": True, "parallel": True,
                  "rotary_pct": 25}),
    "opt": ("OPT: learned positions with 2 extra rows, ReLU MLP, LayerNorm, biases, tied head",
            {"norm": "layernorm", "ffn": "mlp", "activation": "relu", "positions": "learned",
             "pos_offset": 2, "qkv_bias": True, "proj_bias": True, "mlp_bias": True,
             "tied": True}),
}

DECODER_FAMILIES: dict[str, Family] = {}
for _name, (_description, _changes) in ROWS.items():
    unknown = set(_changes) - set(FLAGS)
    if unknown:
        raise AssertionError(f"family {_name}: unknown flags {sorted(unknown)}")
    DECODER_FAMILIES[_name] = register_family(Family(
        name=_name,
        description=_description,
        flags={**FLAGS, **_changes},
        sizes=SIZES,
        optional=OPTIONAL,
        build=partial(build, name=_name),
        flag_help=FLAG_HELP,
        choices=CHOICES,
    ))
