"""Mixture-of-experts decoders with attention variants: an output gate computed from the layer
input before the output projection (AFMoE, Laguna), attention sinks (Flint).

* AFMoE (Arcee AI; transformers' ``AfmoeForCausalLM``): grouped-query attention with RMSNorms on
  each query and key head and a sigmoid output gate per channel (``gate_proj``: d x h·d_head);
  sandwich norms (a norm before and after each branch); sliding-window layers with RoPE and
  full-attention layers without positions (one in every ``global_attn_every_n_layers``); the first
  ``num_dense_layers`` layers a SwiGLU MLP, the others a mixture of SwiGLU experts chosen by a
  sigmoid router with a learned per-expert bias for the choice (``expert_bias``) plus a plain
  shared expert of num_shared_experts × moe_intermediate_size.
* Laguna (transformers' ``LagunaForCausalLM``): the same attention with a softplus output gate,
  one per head by default (``g_proj``: d x h; ``gating="per-element"``: d x h·d_head), pre-norm
  blocks, dense MLP layers and MoE layers as ``mlp_layer_types`` says (a sigmoid router with a
  score-correction bias, plus a plain shared expert of ``shared_expert_intermediate_size``).
* Flint (transformers' ``FlintForCausalLM``): Qwen3-MoE's block (per-head Q/K norms) with attention
  sinks in every layer (a learned logit per head, as gpt-oss's), RoPE in the sliding-window layers
  only, dense MLP layers (``mlp_only_layers``, ``decoder_sparse_step``) and a sigmoid-routed
  mixture plus an ungated shared expert of ``shared_expert_intermediate_size``.
* MiMo-V2-Flash (Xiaomi; transformers' ``MiMoV2FlashForCausalLM``): sliding-window layers with
  twice the key/value heads and attention sinks, full-attention layers without sinks, value heads
  narrower than the query/key heads (``v_head_dim``), dense MLP layers (``mlp_layer_types``) and
  a DeepSeek-V3 router (sigmoid, group-limited; its score-correction bias a buffer) over routed
  experts, no shared expert.
* Beam (transformers' ``BeamForCausalLM``): Qwen3-MoE's attention (per-head Q/K norms) with a
  sigmoid output gate per channel plus a learned bias per head (``gate_proj``, ``gate_bias``),
  sandwich norms, sliding-window RoPE layers and full NoPE layers, dense first layers then a
  DeepSeek-V3 router (sigmoid, group-limited; its score-correction bias a buffer) over routed
  experts, and soft-capped logits.

AFMoE's and Laguna's router biases are parameters transformers creates with ``requires_grad=False``: they are
in the parameter count (as ``sum(p.numel())`` has them) and, in training memory, are counted as
trained parameters (E per MoE layer): the answer says so.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError

from .base import Extended, Family
from .decoders import BUILD, CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, layer_types, llama_like

#: the flags these families add to the generic decoder's (read by ``blocks/decoder_layers.py``
#: and ``blocks/stacks.py``)
ADDED = {"sinks": False, "attn_gate": "sigmoid", "attn_gate_per_head": False, "router_score_bias": True,
         "dense_full": None,
         "full_layers": None}
ADDED_HELP = {
    "sinks": "attention sinks: a learned logit per head joins each softmax row and is dropped after it "
             "(h parameters per layer)",
    "attn_gate": "none, sigmoid or softplus: the attention output times act(x·W_g) before the output "
                 "projection (AFMoE: sigmoid, Laguna: softplus)",
    "attn_gate_per_head": "with attn_gate: one gate per head (W_g: d x h, Laguna) instead of one per "
                          "channel (d x h·d_head, AFMoE)",
    "router_score_bias": "the router has a learned bias per expert added to its scores for the choice "
                         "only (E parameters per MoE layer)",
    "dense_full": "with dense_layers and full_every or full_layers: how many of the dense layers are "
                  "full-attention",
    "full_layers": "with window: how many layers are full-attention, in any order (in place of full_every)",
}
GATES = ("none", "sigmoid", "softplus")
#: MiMo-V2-Flash's flags besides those (read by ``blocks/decoder_layers.py``)
MIMO = {"window_kv_multiple": 2, "sinks_window_only": True, "d_v": 128, "n_group": None, "topk_group": None}
MIMO_HELP = {
    "attn_gate_bias": "with attn_gate per channel: a learned bias per head is added to the gate (h parameters "
                      "per layer)",
    "window_kv_multiple": "the sliding-window layers have this many times h_kv key/value heads",
    "sinks_window_only": "with sinks: only the sliding-window layers have them",
    "d_v": "each value head's width when it is not d_head (an integer)",
    "n_group": "group-limited routing: the experts fall in n_group groups (no parameters)",
    "topk_group": "group-limited routing: the groups each token may use",
}


def _family(name: str, description: str, added: dict, **changes) -> Family:
    """A decoder family with the flags above (and the choices of ``attn_gate``)."""
    helps = {**ADDED_HELP, **MIMO_HELP}
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, added), sizes=SIZES,
                  optional=OPTIONAL, build=partial(BUILD, name=name),
                  flag_help=Extended(FLAG_HELP, added={k: helps[k] for k in added}),
                  choices=Extended(CHOICES, added={"attn_gate": GATES}))


FAMILIES = (
    _family("afmoe", "AFMoE: GQA with per-head Q/K norms and a sigmoid output gate, sandwich norms, "
            "sliding-window RoPE layers and full NoPE layers, dense first layers then sigmoid-routed "
            "experts plus a shared expert",
            ADDED, gqa=True, qk_norm="head", branch_norms=True, moe=True, router="sigmoid",
            shared_expert="plain", dense_layers=1, window=True, full_every=4, nope_full=True),
    _family("laguna", "Laguna: GQA with per-head Q/K norms and a softplus output gate per head, "
            "a dense first layer then sigmoid-routed experts plus a shared expert",
            {**ADDED, "attn_gate": "softplus", "attn_gate_per_head": True}, gqa=True, qk_norm="head",
            moe=True, router="sigmoid", shared_expert="plain", dense_layers=1),
    _family("flint", "Flint: GQA with per-head Q/K norms and attention sinks, sliding-window RoPE layers and "
            "full NoPE layers, dense first layers then sigmoid-routed experts plus a shared expert",
            {**ADDED, "sinks": True, "attn_gate": "none", "router_score_bias": False}, gqa=True,
            qk_norm="head", moe=True, router="sigmoid", shared_expert="plain", dense_layers=2, window=True,
            nope_full=True),
    _family("mimo_v2_flash", "MiMo-V2-Flash: sliding-window layers with twice the K/V heads and attention sinks "
            "among full ones, narrower value heads, a dense first layer then sigmoid-routed experts",
            {**ADDED, **MIMO, "sinks": True, "attn_gate": "none", "router_score_bias": False}, gqa=True,
            moe=True, router="sigmoid", dense_layers=1, window=True),
    _family("beam", "Beam: GQA with per-head Q/K norms and a sigmoid output gate with a bias per head, sandwich "
            "norms, sliding-window RoPE layers and full NoPE layers, dense first layers then sigmoid-routed "
            "experts, soft-capped logits",
            {**ADDED, "attn_gate_bias": True, "n_group": None, "topk_group": None, "router_score_bias": False},
            gqa=True, qk_norm="head", branch_norms=True, moe=True, router="sigmoid", dense_layers=3, window=True,
            nope_full=True, logit_softcap=30),
)

_BIAS_NOTE = ("the router's per-expert bias ({name}) is a parameter transformers does not train "
              "(requires_grad=False): counted in the parameters, and in training memory as if trained")


def _dense_and_windows(f: Fields, flags: dict, sizes: dict, dense: list[bool], types: list[str], window) -> None:
    """Dense layers (the first ones) and sliding-window and full-attention layers in any order:
    the stacks of ``blocks/stacks.py`` (``full_layers``: how many layers are full-attention;
    ``dense_full``: how many of those are dense). The order of the layers changes no count."""
    L = sizes["L"]
    flags["moe"] = True
    n = sum(dense)
    if dense != [True] * n + [False] * (L - n):
        raise SymgptError(f"{f.where}: the dense layers are not the first ones (the pattern symgpt declares)")
    flags["window"] = "sliding_attention" in types
    flags["full_every"] = flags["full_layers"] = flags["dense_full"] = None
    if flags["window"]:
        if window is None:
            raise SymgptError(f"{f.where}: sliding_attention layers need a 'sliding_window' length")
        sizes["W"] = window
        flags["full_layers"] = types.count("full_attention") or None
    if n == L:
        flags["moe"] = False
        flags["dense_layers"] = None
        f.notes.append("every layer is dense: no expert is counted")
        return
    flags["dense_layers"] = n or None
    if n:
        flags["dense_ff"] = sizes["d_ff"]
    if n and flags["full_layers"]:
        flags["dense_full"] = types[:n].count("full_attention") or None


def _attention(f: Fields, flags: dict) -> None:
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, qk_norm="head")


def read_afmoe(f: Fields):
    """transformers' AfmoeConfig."""
    flags, sizes = llama_like(f, dict(V=200192, d=2048, d_ff=6144, L=32, h=16, T_max=16384, head_dim=128))
    _attention(f, flags)
    L = sizes["L"]
    p = f.int("global_attn_every_n_layers", 4)
    default = ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(L)]
    types = layer_types(f, L, default)
    window = f.int("sliding_window", 1024, optional=True)
    n = f.int("num_dense_layers", 1, minimum=0, optional=True) or 0
    moe_ff = f.int("moe_intermediate_size", 1408)
    _dense_and_windows(f, flags, sizes, [i < n for i in range(L)], types, window)
    if flags["moe"]:
        sizes["d_ff"] = moe_ff
        sizes["E"] = f.int("num_experts", 64)
        sizes["k"] = f.int("num_experts_per_tok", 6)
        shared = f.int("num_shared_experts", 2, minimum=0, optional=True) or 0
        flags["shared_expert"] = "plain" if shared else "none"
        flags["shared_ff"] = shared * moe_ff if shared else None
        flags.update(moe=True, router="sigmoid", topk_norm=True, router_score_bias=True)
        f.notes.append(_BIAS_NOTE.format(name="expert_bias"))
    else:
        f.silent("num_experts", "num_experts_per_tok", "num_shared_experts")
    flags["embed_scale"] = bool(f.bool("mup_enabled", False))
    flags.update(attn_gate="sigmoid", attn_gate_per_head=False, branch_norms=True, nope_full=True)
    f.silent("route_scale")  # multiplies the routing weights: no parameters, no matmul
    return "afmoe", flags, sizes


def _per_layer(f: Fields, key: str, L: int, allowed: tuple, default: list) -> list:
    values = f.cfg.get(key)
    f.used.add(key)
    if values is None:
        return default
    if not isinstance(values, list) or len(values) != L or not all(v in allowed for v in values):
        raise SymgptError(f"{f.where}: field {key!r} must list one of {', '.join(map(str, allowed))} per layer")
    return values


def read_laguna(f: Fields):
    """transformers' LagunaConfig."""
    flags, sizes = llama_like(f, dict(V=100352, d=2048, d_ff=8192, L=40, h=48, h_kv=8, T_max=131072,
                                      head_dim=128))
    flags["rotary_pct"] = None
    _attention(f, flags)
    L, h = sizes["L"], sizes["h"]
    per_layer = f.cfg.get("num_attention_heads_per_layer")
    f.used.add("num_attention_heads_per_layer")
    if per_layer is not None and (not isinstance(per_layer, list) or any(x != h for x in per_layer)):
        raise SymgptError(f"{f.where}: num_attention_heads_per_layer other than num_attention_heads in every "
                          "layer is not modelled")
    types = layer_types(f, L, ["full_attention"] * L)
    window = f.int("sliding_window", 512, optional=True)
    notes = []
    mlp = _per_layer(f, "mlp_layer_types", L, ("dense", "sparse"), ["dense"] + ["sparse"] * (L - 1))
    moe_ff = f.int("moe_intermediate_size", 512)
    _dense_and_windows(f, flags, sizes, [t == "dense" for t in mlp], types, window)
    if flags["moe"]:
        sizes["d_ff"] = moe_ff
        sizes["E"] = f.int("num_experts", 256)
        sizes["k"] = f.int("num_experts_per_tok", 8)
        shared = f.int("shared_expert_intermediate_size", 512, minimum=0)
        flags["shared_expert"] = "plain" if shared else "none"
        flags["shared_ff"] = shared or None
        flags.update(moe=True, router="sigmoid", topk_norm=True, router_score_bias=True)
        notes.append(_BIAS_NOTE.format(name="e_score_correction_bias"))
    else:
        f.silent("num_experts", "num_experts_per_tok", "shared_expert_intermediate_size")
    gating = f.cfg.get("gating", True)
    f.used.add("gating")
    if gating not in (True, "per-head", "per-element"):
        raise SymgptError(f"{f.where}: gating={gating!r} is not modelled (true, 'per-head' or 'per-element')")
    flags.update(attn_gate="softplus", attn_gate_per_head=gating != "per-element")
    if f.bool("moe_apply_router_weight_on_input", False):
        raise SymgptError(f"{f.where}: moe_apply_router_weight_on_input=true is not modelled "
                          "(transformers does not support it either)")
    cap = f.cfg.get("moe_router_logit_softcapping", 0.0)
    f.used.add("moe_router_logit_softcapping")
    if cap:
        f.notes.append("moe_router_logit_softcapping: the router logits' soft-cap (elementwise, no parameters, "
                       "no matmul) is not modelled")
    f.silent("moe_routed_scaling_factor")  # multiplies the routed output: no parameters, no matmul
    notes.append("the rotary fraction is per layer kind (rope_parameters; by default half of each head in the "
                 "full-attention layers): counted as rotating every dimension (RoPE's elementwise work only: no "
                 "parameters, no matmul)")
    f.notes.append("; ".join(notes))
    return "laguna", flags, sizes


def read_flint(f: Fields):
    """transformers' FlintConfig (a Qwen2MoeConfig)."""
    flags, sizes = llama_like(f, dict(V=150144, d=2048, d_ff=6144, L=49, h=32, h_kv=4, T_max=262144,
                                      head_dim=128))
    _attention(f, flags)
    L = sizes["L"]
    default = ["full_attention" if i < 2 or i % 4 == 1 or i == L - 1 else "sliding_attention" for i in range(L)]
    types = layer_types(f, L, default)
    window = f.int("sliding_window", 513, optional=True)
    step = f.int("decoder_sparse_step", 1)
    only = f.cfg.get("mlp_only_layers", [0, 1])
    f.used.add("mlp_only_layers")
    if only is None:
        only = [0, 1]
    if not isinstance(only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in only):
        raise SymgptError(f"{f.where}: field 'mlp_only_layers' must be a list of layer numbers")
    experts = f.int("num_experts", 256, minimum=0)
    dense = [i in only or not experts or (i + 1) % step != 0 for i in range(L)]
    moe_ff = f.int("moe_intermediate_size", 512)
    _dense_and_windows(f, flags, sizes, dense, types, window)
    if flags["moe"]:
        sizes["d_ff"] = moe_ff
        sizes["E"] = experts
        sizes["k"] = f.int("num_experts_per_tok", 6)
        shared = f.int("shared_expert_intermediate_size", 1024, minimum=0)
        flags["shared_expert"] = "plain" if shared else "none"
        flags["shared_ff"] = shared or None
        flags.update(router="sigmoid", topk_norm=f.bool("norm_topk_prob", True))
    else:
        f.silent("num_experts_per_tok", "shared_expert_intermediate_size", "norm_topk_prob")
    flags.update(sinks=True, attn_gate="none", router_score_bias=False, nope_full=True)
    return "flint", flags, sizes


def read_mimo_v2_flash(f: Fields):
    """transformers' MiMoV2FlashConfig (a Glm4MoeConfig)."""
    f.rename({"num_local_experts": "n_routed_experts"})
    flags, sizes = llama_like(f, dict(V=152576, d=4096, d_ff=16384, L=48, h=64, h_kv=4, T_max=131072,
                                      head_dim=192))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=False)  # o_proj has no bias
    L = sizes["L"]
    types = layer_types(f, L, ["full_attention" if i == 0 or not (i + 1) % 6 else "sliding_attention"
                               for i in range(L)])
    window = f.int("sliding_window", 129, optional=True)
    if f.cfg.get("sliding_window_size") is not None:  # transformers: sliding_window = sliding_window_size + 1
        window = f.int("sliding_window_size") + 1
    f.used.add("sliding_window_size")
    mlp = _per_layer(f, "mlp_layer_types", L, ("dense", "sparse"), ["dense"] + ["sparse"] * (L - 1))
    moe_ff = f.int("moe_intermediate_size", 2048)
    _dense_and_windows(f, flags, sizes, [t == "dense" for t in mlp], types, window)
    if flags["moe"]:
        sizes["d_ff"] = moe_ff
        sizes["E"] = f.int("n_routed_experts", 256)
        sizes["k"] = f.int("num_experts_per_tok", 8)
        flags.update(router="sigmoid", topk_norm=f.bool("norm_topk_prob", True), shared_expert="none",
                     n_group=f.int("n_group", 1), topk_group=f.int("topk_group", 1))
    else:
        f.silent("n_routed_experts", "num_experts_per_tok", "norm_topk_prob", "n_group", "topk_group")
    flags.update(sinks=True, sinks_window_only=True, window_kv_multiple=2, attn_gate="none",
                 router_score_bias=False, d_v=f.int("v_head_dim", 128))
    flags["rotary_pct"] = None
    f.notes.append("MiMo-V2-Flash rotates int(head_dim · partial_rotary_factor) dimensions of each query/key "
                   "head "
                   "(rope_parameters per layer kind): counted as rotating all of them (RoPE's elementwise work "
                   "only: no parameters, no matmul); attention_value_scale multiplies the values by a scalar: "
                   "an elementwise product not counted")
    f.silent("attention_value_scale", "routed_scaling_factor")
    return "mimo_v2_flash", flags, sizes


def read_beam(f: Fields):
    """transformers' BeamConfig (a Qwen3MoeConfig)."""
    flags, sizes = llama_like(f, dict(V=151936, d=5120, d_ff=20480, L=52, h=48, h_kv=8, T_max=8192, head_dim=128))
    _attention(f, flags)
    L = sizes["L"]
    default = ["sliding_attention" if (i + 1) % 6 else "full_attention" for i in range(L)]
    default[-1] = "full_attention"
    types = layer_types(f, L, default)
    window = f.int("sliding_window", 512, optional=True)
    mlp = _per_layer(f, "mlp_layer_types", L, ("dense", "sparse"),
                     ["dense"] * min(3, L) + ["sparse"] * (L - min(3, L)))
    moe_ff = f.int("moe_intermediate_size", 2560)
    _dense_and_windows(f, flags, sizes, [t == "dense" for t in mlp], types, window)
    if flags["moe"]:
        sizes["d_ff"] = moe_ff
        sizes["E"] = f.int("num_experts", 256)
        sizes["k"] = f.int("num_experts_per_tok", 8)
        flags.update(router="sigmoid", topk_norm=f.bool("norm_topk_prob", True), shared_expert="none",
                     n_group=f.int("n_group", 8), topk_group=f.int("topk_group", 4))
    else:
        f.silent("num_experts", "num_experts_per_tok", "norm_topk_prob", "n_group", "topk_group")
    flags["logit_softcap"] = f.whole("final_logit_softcapping", 30)
    rope = f.cfg.get("rope_parameters")
    if isinstance(rope, dict) and rope.get("full_attention") is not None and "full_attention" in types:
        raise SymgptError(f"{f.where}: rotary positions in the full-attention layers (rope_parameters) are "
                          "not modelled")
    flags.update(attn_gate="sigmoid", attn_gate_per_head=False, attn_gate_bias=True, router_score_bias=False,
                 branch_norms=True, nope_full=True, rotary_pct=None)
    f.notes.append("Beam scales each residual add by depth (1/√i and √((i-1)/i)), routed_scaling_factor the "
                   "routed output, and the full-attention layers' queries by (1 + position/2048)^0.1: elementwise "
                   "products not counted (no parameters, no matmul)")
    f.silent("routed_scaling_factor", "decoder_sparse_step", "mlp_only_layers", "router_aux_loss_coef",
             "use_sliding_window", "max_window_layers")
    return "beam", flags, sizes


READERS = {"afmoe": Reader(read_afmoe, ("AfmoeForCausalLM",)),
           "laguna": Reader(read_laguna, ("LagunaForCausalLM",)),
           "flint": Reader(read_flint, ("FlintForCausalLM",)),
           "mimo_v2_flash": Reader(read_mimo_v2_flash, ("MiMoV2FlashForCausalLM",)),
           "beam": Reader(read_beam, ("BeamForCausalLM",))}

PRESETS = ()
