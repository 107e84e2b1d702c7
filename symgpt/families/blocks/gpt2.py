"""The named decoder families: the generic decoder (``decoder.py``) with each architecture's
flag defaults. A family is a row of data; its flags can still be changed per model.

GPT-2 (and GPT-3, the same architecture) is the generic decoder with its architecture fixed
(LayerNorm, learned positions, a tanh-GELU MLP of width 4d, a fused Q/K/V projection) and its own
flag vocabulary, as nanoGPT and the GPT-2 config name them: ``bias`` (false removes every linear and
LayerNorm bias), ``qkv_bias``, ``tied``, ``vocab_multiple``, ``dropout``, ``loss``. Each is an alias
of decoder flags (:func:`gpt2_flags`); its node paths and labels are GPT-2's.
"""

from __future__ import annotations

from functools import partial

from .base import Family, register_family
from .decoder import build
from .decoder_flags import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES

# --- GPT-2: the decoder with GPT-2's architecture and flag vocabulary ------------------------
#: the decoder flags GPT-2's architecture fixes
GPT2_ARCHITECTURE = {"norm": "layernorm", "positions": "learned", "ffn": "mlp",
                     "activation": "gelu_new", "fused_qkv": True}

#: GPT-2's own flags and their defaults (GPT-2 as released: tied head, every bias)
GPT2_FLAGS = {"tied": True, "qkv_bias": True, "bias": True, "vocab_multiple": None,
              "dropout": False, "loss": True}

GPT2_HELP = {
    "tied": "LM head shares the token embedding matrix",
    "qkv_bias": "Q/K/V projections have a bias",
    "bias": "false removes every linear and LayerNorm bias (nanoGPT bias=False)",
    "vocab_multiple": "pad the vocabulary up to a multiple (nanoGPT: 64)",
    "dropout": "dropout layers present (their masks are saved for backward)",
    "loss": "the graph ends in the cross-entropy loss",
}

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


GPT2_SIZES = ("L", "d", "h", "V", "T_max")
GPT2_OPTIONAL = ("d_ff",)  # bound, the MLP's width is the symbol d_ff instead of 4d


def _build_gpt2(flags, bound):
    # only GPT-2's own sizes shape its graph (a bound h_kv or d_head does not make it GQA)
    mine = frozenset(n for n in bound if n in GPT2_SIZES + GPT2_OPTIONAL)
    return build(gpt2_flags(flags), mine, name="gpt2", labels=GPT2_LABELS)


GPT2 = register_family(Family(
    name="gpt2",
    description="GPT-2 / GPT-3: pre-LN, learned positions, GELU FFN, LayerNorm, tied head",
    flags=GPT2_FLAGS,
    sizes=GPT2_SIZES,
    optional=GPT2_OPTIONAL,
    build=_build_gpt2,
    overridden_by={"qkv_bias": ("bias", False)},
    flag_help=GPT2_HELP,
))

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
              {"activation": "gelu_tanh", "embed_scale": True, "tied": True, "norm_offset": True}),
    "phi3": ("Phi-3: LLaMA with fused QKV and fused gate/up projections",
             {"fused_qkv": True, "fused_gate_up": True}),
    "falcon": ("Falcon: parallel attention + GELU MLP, multi-query (h_kv), one shared LayerNorm",
               {"norm": "layernorm", "ffn": "mlp", "activation": "gelu", "fused_qkv": True,
                "parallel": True, "shared_norm": True, "tied": True, "gqa": True, "kv_index": True}),
    "gpt_neox": ("GPT-NeoX / Pythia: parallel residual, partial rotary (25%), LayerNorm, biases",
                 {"norm": "layernorm", "ffn": "mlp", "activation": "gelu", "fused_qkv": True,
                  "qkv_bias": True, "proj_bias": True, "mlp_bias": True, "parallel": True,
                  "rotary_pct": 25}),
    "opt": ("OPT: learned positions with 2 extra rows, ReLU MLP, LayerNorm, biases, tied head",
            {"norm": "layernorm", "ffn": "mlp", "activation": "relu", "positions": "learned",
             "pos_offset": 2, "qkv_bias": True, "proj_bias": True, "mlp_bias": True,
             "tied": True}),
    # --- issue 16 ---
    "qwen3": ("Qwen3: LLaMA with an RMSNorm on each query and key head (no Q/K/V biases)",
              {"gqa": True, "qk_norm": "head"}),
    "qwen2_moe": ("Qwen2-MoE (Qwen1.5-MoE): Qwen2 blocks, routed experts plus a sigmoid-gated shared expert",
                  {"gqa": True, "qkv_bias": True, "moe": True, "shared_expert": "gated", "topk_norm": False}),
    "qwen3_moe": ("Qwen3-MoE: Qwen3 blocks with routed experts (no shared expert)",
                  {"gqa": True, "qk_norm": "head", "moe": True, "topk_norm": False}),
    "gemma2": ("Gemma 2: norms before and after each branch, soft-capped scores and logits, "
               "sliding-window and full layers alternating",
               {"activation": "gelu_tanh", "embed_scale": True, "tied": True, "gqa": True, "norm_offset": True,
                "branch_norms": True, "attn_softcap": 50, "logit_softcap": 30, "window": True,
                "full_every": 2}),
    "gemma3_text": ("Gemma 3 (text): Gemma 2's block with Q/K norms, no soft-capping, one full layer in six",
                    {"activation": "gelu_tanh", "embed_scale": True, "tied": True, "gqa": True,
                     "norm_offset": True, "local_rope": True, "branch_norms": True, "qk_norm": "head",
                     "window": True, "full_every": 6}),
    "phi": ("Phi-2: parallel attention and GELU MLP on one LayerNorm, partial rotary (40%), biases, "
            "an LM head with a bias",
            {"norm": "layernorm", "ffn": "mlp", "activation": "gelu_new", "parallel": True,
             "shared_norm": True, "qkv_bias": True, "proj_bias": True, "mlp_bias": True,
             "head_bias": True, "rotary_pct": 40}),
    "starcoder2": ("StarCoder2: LayerNorm, GELU MLP, biases everywhere, GQA, tied head",
                   {"norm": "layernorm", "ffn": "mlp", "activation": "gelu_tanh", "qkv_bias": True,
                    "proj_bias": True, "mlp_bias": True, "gqa": True, "tied": True}),
    "olmo2": ("OLMo 2: norms on the branch outputs only (no pre-norm), RMSNorm over all query/key heads",
              {"pre_norm": False, "branch_norms": True, "qk_norm": "full"}),
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
