"""Gated DeltaNet hybrids: Qwen3-Next (transformers' ``Qwen3NextForCausalLM``) and Qwen3.5
(``Qwen3_5ForCausalLM``, ``Qwen3_5MoeForCausalLM``): linear-attention layers (Gated DeltaNet,
Yang, Kautz & Hatamizadeh 2024; ``blocks/gated_delta.py``) among gated-attention layers (one in
every ``full_attention_interval``, or as ``layer_types`` lists them), each layer's FFN a SwiGLU
MLP or a mixture of SwiGLU experts plus a sigmoid-gated shared expert.

The attention layers: grouped-query attention with RMSNorms on each query and key head, partial
RoPE, and a sigmoid output gate per channel (q_proj's doubled output: the same parameters and
FLOPs as a separate d x h·d_head gate projection). The Gated DeltaNet layers are counted by the
chunked algorithm of transformers' PyTorch path (``ops.GatedDeltaRule``: chunks of 64). The
layer pattern is data: ``linear_layers`` Gated DeltaNet layers and L - linear_layers attention
layers, two stacks; the order of the layers changes no count. At inference the recurrent state of
a linear-attention layer (``inference.state``) is not a KV cache: the KV cache holds the attention
layers' keys and values.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from ..core.errors import SymgptError
from .base import Extended, Family, Preset
from .decoders import BUILD, CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, llama_like, rotary_pct

#: the flags these families add to the generic decoder's (read by ``blocks/stacks.py``,
#: ``blocks/decoder_layers.py`` and ``blocks/gated_delta.py``)
ADDED = {"attn_gate": "sigmoid", "attn_gate_per_head": False, "mixer": "attention", "linear_mixer": "gated_delta",
         "linear_layers": 36, "gdn_k_heads": 16, "gdn_v_heads": 32, "gdn_k_dim": 128, "gdn_v_dim": 128,
         "gdn_conv": 4, "gdn_chunk": 64, "linear_pre_norm": False, "full_layers": None}
#: OLMo-Hybrid's own flag: β doubled after its sigmoid (linear_allow_neg_eigval), a tensor the fla list keeps
OLMO_ADDED = {"gdn_beta_doubled": True}
ADDED_HELP = {
    "attn_gate": "none or sigmoid: the attention output times sigmoid(x·W_g) before the output projection",
    "attn_gate_per_head": "with attn_gate: one gate per head instead of one per channel",
    "mixer": "attention or gated_delta: the token mixer of the layers of a stack",
    "linear_mixer": "the mixer of the linear-attention layers (gated_delta: Gated DeltaNet)",
    "linear_layers": "how many of the L layers are linear-attention layers (the others attention layers)",
    "gdn_k_heads": "Gated DeltaNet: query/key heads (linear_num_key_heads)",
    "gdn_v_heads": "Gated DeltaNet: value heads (linear_num_value_heads), a multiple of gdn_k_heads",
    "gdn_k_dim": "Gated DeltaNet: width of a query/key head (linear_key_head_dim)",
    "gdn_v_dim": "Gated DeltaNet: width of a value head (linear_value_head_dim)",
    "gdn_conv": "Gated DeltaNet: kernel of the causal conv1d over q, k and v (linear_conv_kernel_dim)",
    "gdn_chunk": "Gated DeltaNet: chunk length of the chunked algorithm (64 in transformers' PyTorch path)",
    "full_layers": "with window: how many of the attention layers are full-attention (the others sliding-window)",
    "linear_pre_norm": "the linear-attention layers are pre-norm (a norm before each branch) whatever the "
                       "attention layers' norms (OLMo-Hybrid: norms after each attention-layer branch)",
    "gdn_beta_doubled": "Gated DeltaNet: β = 2·sigmoid(b) (OLMo-Hybrid's linear_allow_neg_eigval); no count changes, "
                        "only the tensors a fused kernel library keeps (derive.memory_kernels_fla)",
}
_CHOICES = {"attn_gate": ("none", "sigmoid"), "mixer": ("attention", "gated_delta"), "linear_mixer": ("gated_delta",)}


def _family(name: str, description: str, **changes) -> Family:
    own = OLMO_ADDED if name == "olmo_hybrid" else {}
    added = {**ADDED, **own, **{k: v for k, v in changes.items() if k in ADDED}}
    changes = {k: v for k, v in changes.items() if k not in ADDED}
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, added), sizes=SIZES,
                  optional=OPTIONAL, build=partial(BUILD, name=name), flag_help=Extended(FLAG_HELP, added=ADDED_HELP),
                  choices=Extended(CHOICES, added=_CHOICES))


FAMILIES = (
    _family("qwen3_next", "Qwen3-Next: Gated DeltaNet layers among gated-attention layers (3:1), GQA with per-head "
            "Q/K norms and partial RoPE, routed experts plus a sigmoid-gated shared expert",
            gqa=True, qk_norm="head", norm_offset=True, moe=True, shared_expert="gated", topk_norm=True,
            rotary_pct=25),
    _family("qwen3_5", "Qwen3.5: Gated DeltaNet layers among gated-attention layers (3:1), GQA with per-head "
            "Q/K norms and partial RoPE, a SwiGLU MLP",
            gqa=True, qk_norm="head", norm_offset=True, rotary_pct=25, linear_layers=24),
    _family("qwen3_5_moe", "Qwen3.5-MoE: Gated DeltaNet layers among gated-attention layers (3:1), GQA with "
            "per-head Q/K norms and partial RoPE, routed experts plus a sigmoid-gated shared expert",
            gqa=True, qk_norm="head", norm_offset=True, moe=True, shared_expert="gated", topk_norm=True,
            rotary_pct=25, linear_layers=30),
    _family("olmo_hybrid", "OLMo-Hybrid: pre-norm Gated DeltaNet layers among OLMo 3 attention layers (3:1; "
            "RMSNorms of the whole query and key, norms after each branch), a SwiGLU MLP",
            qk_norm="full", pre_norm=False, branch_norms=True, attn_gate="none", linear_pre_norm=True,
            linear_layers=24, gdn_k_heads=30, gdn_v_heads=30, gdn_k_dim=96, gdn_v_dim=192),
    _family("lara_mini", "Lara-Mini: Gated DeltaNet layers among sliding-window RoPE and full NoPE attention layers "
            "(GQA with per-head Q/K norms), routed experts plus an ungated shared expert",
            gqa=True, qk_norm="head", attn_gate="none", tied=True, window=True, nope_full=True, moe=True,
            shared_expert="plain", topk_norm=True, full_layers=7, linear_layers=14, gdn_k_heads=8, gdn_v_heads=16),
)


def _gated_delta(f: Fields, flags: dict, sizes: dict, defaults: dict, default_types=None, window=False) -> list:
    """The layer pattern and the Gated DeltaNet sizes; returns the layer types (*window*: some may be
    ``sliding_attention``)."""
    L = sizes["L"]
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None and default_types is not None:
        types = default_types
    elif types is None:
        p = f.int("full_attention_interval", 4)
        types = ["linear_attention" if (i + 1) % p else "full_attention" for i in range(L)]
    elif default_types is None:
        f.silent("full_attention_interval")
    kinds = ("linear_attention", "full_attention", "sliding_attention") if window else \
        ("linear_attention", "full_attention")
    if not isinstance(types, list) or not all(t in kinds for t in types):
        raise SymgptError(f"{f.where}: field 'layer_types' must list {' / '.join(map(repr, kinds))} per layer")
    if len(types) != L:
        raise SymgptError(f"{f.where}: layer_types lists {len(types)} layers, num_hidden_layers is {L}")
    n = types.count("linear_attention")
    if n == 0:
        raise SymgptError(f"{f.where}: no linear_attention layer (a plain attention model; not modelled as this type)")
    flags["linear_layers"] = n
    flags["full_layers"] = None
    D = defaults
    hk, hv = f.int("linear_num_key_heads", D["hk"]), f.int("linear_num_value_heads", D["hv"])
    if hv % hk:
        raise SymgptError(f"{f.where}: linear_num_value_heads {hv} is not a multiple of linear_num_key_heads {hk}")
    flags.update(gdn_k_heads=hk, gdn_v_heads=hv, gdn_k_dim=f.int("linear_key_head_dim", D["dk"]),
                 gdn_v_dim=f.int("linear_value_head_dim", D["dv"]), gdn_conv=f.int("linear_conv_kernel_dim", 4),
                 gdn_chunk=64)
    if f.str("hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_act {f.cfg['hidden_act']!r} is not modelled (the Gated DeltaNet's "
                          "conv activation and gate are silu)")
    return types


def _attention(f: Fields, flags: dict) -> None:
    if f.bool("attention_bias", False):
        raise SymgptError(f"{f.where}: attention_bias=true is not modelled (q_proj's bias covers the output "
                          "gate's half as well)")
    flags.update(qkv_bias=False, proj_bias=False, qk_norm="head", attn_gate="sigmoid", attn_gate_per_head=False,
                 norm_offset=True)


def _experts(f: Fields, flags: dict, sizes: dict, moe_ff: int, experts: int, k: int, shared_ff: int,
             sparse_fields: bool) -> None:
    if sparse_fields:
        L = sizes["L"]
        step = f.int("decoder_sparse_step", 1)
        only = f.cfg.get("mlp_only_layers") or []
        f.used.add("mlp_only_layers")
        if not isinstance(only, list) or any(i in only or (i + 1) % step for i in range(L)):
            raise SymgptError(f"{f.where}: dense MLP layers among the expert layers (mlp_only_layers / "
                              "decoder_sparse_step) are not modelled for this model type")
    sizes["d_ff"] = f.int("moe_intermediate_size", moe_ff)
    sizes["E"] = f.int("num_experts", experts)
    sizes["k"] = f.int("num_experts_per_tok", k)
    # the shared expert and its gate are always built (an empty one would still have its gate): minimum 1
    shared = f.int("shared_expert_intermediate_size", shared_ff)
    flags.update(moe=True, topk_norm=f.bool("norm_topk_prob", True) if sparse_fields else True,
                 shared_expert="gated", shared_ff=shared)


def read_qwen3_next(f: Fields):
    """transformers' Qwen3NextConfig."""
    flags, sizes = llama_like(f, dict(V=151936, d=2048, d_ff=5632, L=48, h=16, h_kv=2, T_max=32768, head_dim=256))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 4))  # Qwen3NextConfig.__post_init__'s default
    _attention(f, flags)
    _gated_delta(f, flags, sizes, dict(hk=16, hv=32, dk=128, dv=128))
    if f.int("num_experts", 512, minimum=0) == 0:
        raise SymgptError(f"{f.where}: num_experts = 0 (every layer a dense MLP) is not modelled for this model type")
    _experts(f, flags, sizes, 512, 512, 10, 512, sparse_fields=True)
    return "qwen3_next", flags, sizes


def read_qwen3_5_text(f: Fields):
    """transformers' Qwen3_5TextConfig (the text model of Qwen3.5: a SwiGLU MLP in every layer)."""
    flags, sizes = llama_like(f, dict(V=248320, d=4096, d_ff=12288, L=32, h=16, h_kv=4, T_max=32768, head_dim=256))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 4))  # Qwen3_5TextConfig.__post_init__'s default
    _attention(f, flags)
    _gated_delta(f, flags, sizes, dict(hk=16, hv=32, dk=128, dv=128))
    return "qwen3_5", flags, sizes


def read_qwen3_5_moe_text(f: Fields):
    """transformers' Qwen3_5MoeTextConfig (experts in every layer; the router always renormalises
    its top-k weights)."""
    flags, sizes = llama_like(f, dict(V=248320, d=2048, d_ff=512, L=40, h=16, h_kv=2, T_max=32768, head_dim=256))
    flags["rotary_pct"] = rotary_pct(f, default=Fraction(1, 4))  # Qwen3_5MoeTextConfig.__post_init__'s default
    _attention(f, flags)
    _gated_delta(f, flags, sizes, dict(hk=16, hv=32, dk=128, dv=128))
    _experts(f, flags, sizes, 512, 256, 8, 512, sparse_fields=False)
    return "qwen3_5_moe", flags, sizes


def read_olmo_hybrid(f: Fields):
    """transformers' OlmoHybridConfig: OLMo 3's attention layers (RMSNorms of the whole query and key,
    norms after each branch; no positions when ``rope_parameters`` has no ``rope_theta``) among
    pre-norm Gated DeltaNet layers (separate q, k, v, a, b and gate projections: the same counts as
    Qwen3-Next's fused ones; β doubled when ``linear_allow_neg_eigval``, elementwise)."""
    flags, sizes = llama_like(f, dict(V=100352, d=3840, d_ff=11008, L=32, h=30, T_max=65536))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias)
    rope = f.cfg.get("rope_parameters")
    flags["nope_full"] = not (isinstance(rope, dict) and rope.get("rope_theta") is not None)
    L, h, d = sizes["L"], sizes["h"], sizes["d"]
    default = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(L)]
    if "full_attention" not in default:
        default[-1] = "full_attention"
    hk = f.int("linear_num_key_heads", h, optional=True) or h
    dk = f.int("linear_key_head_dim", int(0.75 * d / hk), optional=True) or int(0.75 * d / hk)
    _gated_delta(f, flags, sizes, dict(hk=hk, hv=h, dk=dk, dv=2 * dk), default_types=default)
    # initialisation of A_log and dt_bias, and β's range (elementwise): no count
    f.silent("linear_a_log_min", "linear_a_log_max", "linear_dt_min", "linear_dt_max", "linear_dt_init_floor")
    flags["gdn_beta_doubled"] = f.bool("linear_allow_neg_eigval", True)  # OlmoHybridConfig's default
    return "olmo_hybrid", flags, sizes


def read_lara_mini(f: Fields):
    """transformers' LaraMiniConfig: Qwen3's attention (RMSNorms on each query and key head, no output
    gate) in sliding-window layers with RoPE and full-attention layers without positions, among
    Gated DeltaNet layers (the released pattern of period 5: linear, sliding, linear, full, sliding);
    experts in every layer (softmax router) plus a shared expert added without a gate."""
    flags, sizes = llama_like(f, dict(V=151936, d=1024, d_ff=512, L=34, h=16, h_kv=4, T_max=131072, head_dim=128,
                                      tied=True))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head", attn_gate="none")
    L = sizes["L"]
    pattern = ["linear_attention", "sliding_attention", "linear_attention", "full_attention", "sliding_attention"]
    types = _gated_delta(f, flags, sizes, dict(hk=8, hv=16, dk=128, dv=128),
                         default_types=[pattern[i % 5] for i in range(L)], window=True)
    sliding, full = types.count("sliding_attention"), types.count("full_attention")
    flags.update(window=bool(sliding), nope_full=True)
    if sliding:
        sizes["W"] = f.int("sliding_window", 512)
        if full:
            flags["full_layers"] = full
    else:
        f.silent("sliding_window")
    sizes["d_ff"] = f.int("moe_intermediate_size", 512)
    sizes["E"] = f.int("num_experts", 128)
    sizes["k"] = f.int("num_experts_per_tok", 4)
    shared = f.int("shared_expert_intermediate_size", 512, minimum=0)
    flags.update(moe=True, topk_norm=f.bool("norm_topk_prob", True), shared_expert="plain" if shared else "none",
                 shared_ff=shared or None)
    return "lara_mini", flags, sizes


READERS = {"qwen3_next": Reader(read_qwen3_next, ("Qwen3NextForCausalLM",)),
           "olmo_hybrid": Reader(read_olmo_hybrid, ("OlmoHybridForCausalLM",)),
           "lara_mini": Reader(read_lara_mini, ("LaraMiniForCausalLM",)),
           "qwen3_5_text": Reader(read_qwen3_5_text, ("Qwen3_5ForCausalLM",)),
           "qwen3_5_moe_text": Reader(read_qwen3_5_moe_text, ("Qwen3_5MoeForCausalLM",))}

PRESETS = (
    Preset("qwen3-next-80b-a3b", "qwen3_next",
           {"V": 151936, "d": 2048, "d_ff": 512, "L": 48, "h": 16, "T_max": 262144, "h_kv": 2, "d_head": 256, "E": 512,
            "k": 10},
           flags={"shared_ff": 512},
           source="Qwen Team 2025 (Qwen3-Next); Qwen/Qwen3-Next-80B-A3B-Instruct its config.json on the Hugging Face Hub",
           note="79,674,391,296 parameters; published: 80B in total, 3B active (79B without embeddings). 48 layers: "
                "3 Gated DeltaNet layers then 1 gated attention layer, 12 times; 512 experts (10 active) and a "
                "shared expert in every layer; the multi-token-prediction layer is not counted (transformers does "
                "not build it)"),
)
