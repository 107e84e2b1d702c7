"""gpt-oss (OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card", arXiv:2508.10925; transformers'
GptOssForCausalLM):
grouped-query attention with biases and attention sinks (a learned logit per head in every
softmax row), sliding-window layers (128 keys) alternating with full-attention ones, and a
mixture of experts in every layer: a router with a bias whose k largest logits are softmaxed, and
experts whose fused gate/up and down projections have biases, with a clamped SwiGLU
((up + 1) · gate · σ(1.702 · gate), both clamped at 7).

The clamped SwiGLU has the parameters and matmuls of a SwiGLU; it is counted as one (its clamps,
``+ 1`` and scaled sigmoid are a few more elementwise operations per expert unit, and its eager
form keeps a few more tensors): the answer says so."""

from __future__ import annotations

from functools import partial

from .base import Extended, Family, Preset
from .decoders import BUILD, CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, every_pth_full, heads, layer_types, rotary_pct, windows

#: the flags gpt-oss adds to the generic decoder's (read by ``blocks/decoder_layers.py``)
ADDED = {"sinks": True, "router_bias": True}
ADDED_HELP = {
    "sinks": "attention sinks: a learned logit per head joins each softmax row and is dropped after it "
             "(h parameters per layer)",
    "router_bias": "the router has a bias",
}
#: the router: the softmax of the k largest logits (GptOssTopKRouter), or the generic ones
ROUTERS = ("topk_softmax", "softmax", "sigmoid")

FAMILIES = (Family(
    name="gpt_oss",
    description="gpt-oss: GQA with biases and attention sinks, sliding-window and full layers alternating, "
                "MoE with a biased router and biased experts (clamped SwiGLU)",
    flags=Extended(FLAGS, dict(gqa=True, qkv_bias=True, proj_bias=True, moe=True, router="topk_softmax",
                               mlp_bias=True, fused_gate_up=True, window=True, full_every=2), ADDED),
    sizes=SIZES, optional=OPTIONAL, build=partial(BUILD, name="gpt_oss"),
    flag_help=Extended(FLAG_HELP, {"router": "topk_softmax (the softmax of the k largest logits), softmax "
                                             "or sigmoid router scores"}, ADDED_HELP),
    choices=Extended(CHOICES, {"router": ROUTERS})),)

_NOTE = ("gpt-oss's clamped SwiGLU ((up + 1)·gate·σ(1.702·gate), clamped at swiglu_limit) is counted as a "
         "SwiGLU: the same parameters and matmuls; its few extra elementwise operations per expert unit "
         "and the tensors its eager form keeps are not modelled")


def read(f: Fields):
    """transformers' GptOssConfig."""
    sizes = {"V": f.int("vocab_size", 201088), "d": f.int("hidden_size", 2880),
             "d_ff": f.int("intermediate_size", 2880), "L": f.int("num_hidden_layers", 36),
             "h": f.int("num_attention_heads", 64), "T_max": f.int("max_position_embeddings", 131072),
             "E": f.int("num_local_experts", 128), "k": f.int("num_experts_per_tok", 4)}
    heads(f, sizes, kv_default=8, head_dim_default=64)
    bias = f.bool("attention_bias", True)
    flags = {"tied": f.bool("tie_word_embeddings", False), "rotary_pct": rotary_pct(f),
             "qkv_bias": bias, "proj_bias": bias}
    L = sizes["L"]
    window = f.int("sliding_window", 128, optional=True)
    default = every_pth_full(L, 2)
    windows(f, flags, sizes, layer_types(f, L, default), window)
    if not flags["window"]:
        flags["full_every"] = None
    # the experts' activation is the clamped SwiGLU whatever hidden_act says (GptOssExperts._apply_gate)
    f.silent("hidden_act", "swiglu_alpha", "swiglu_limit")
    # the published configs also carry the original code's names (no count of transformers' reads them)
    f.silent("experts_per_token", "initial_context_length")
    quant = f.cfg.get("quantization_config")
    f.used.add("quantization_config")
    if isinstance(quant, dict) and quant.get("quant_method") == "mxfp4":
        f.notes.append("quantization_config: the experts' weights are stored in MXFP4; the parameter count is "
                       "the same, their bytes follow the precision you choose, not MXFP4")
    elif quant is not None:
        f.notes.append("quantization_config is not modelled: the parameter count is the same, the bytes follow "
                       "the precision you choose")
    f.notes.append(_NOTE)
    return "gpt_oss", flags, sizes


READERS = {"gpt_oss": Reader(read, ("GptOssForCausalLM",))}

_HF = "its config.json on the Hugging Face Hub"
_MXFP4 = ("; the checkpoint stores the experts' weights in MXFP4 (4-bit values with a shared 8-bit "
          "scale per 32), so its bytes are fewer than this count at bf16 suggests: the parameter count "
          "is the same")

_CARD = "OpenAI 2025 (gpt-oss-120b & gpt-oss-20b Model Card, arXiv:2508.10925)"
_ACTIVE = ("; symgpt's params.active also counts the embedding table (V·d = 579,133,440), which the "
           "published active count leaves out")

PRESETS = (
    Preset("gpt-oss-20b", "gpt_oss",
           {"L": 24, "h": 64, "h_kv": 8, "d_head": 64, "d": 2880, "d_ff": 2880, "V": 201088,
            "T_max": 131072, "W": 128, "E": 32, "k": 4},
           source=_CARD + "; openai/gpt-oss-20b " + _HF,
           note="20,914,757,184 parameters; published: 20.9B in total, 3.6B active per token" + _ACTIVE + _MXFP4),
    Preset("gpt-oss-120b", "gpt_oss",
           {"L": 36, "h": 64, "h_kv": 8, "d_head": 64, "d": 2880, "d_ff": 2880, "V": 201088,
            "T_max": 131072, "W": 128, "E": 128, "k": 4},
           source=_CARD + "; openai/gpt-oss-120b " + _HF,
           note="116,829,156,672 parameters; published: 116.8B in total, 5.1B active per token" + _ACTIVE + _MXFP4),
)
