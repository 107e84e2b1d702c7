"""Step 3.5's language model (StepFun; transformers' ``Step3p7TextModel`` on a ``step3p5``
configuration, the text decoder of Step3p7's ``Step3p7ForConditionalGeneration``): grouped-query
attention with Gemma-style RMSNorms (scaled by 1 + w) on each query and key head and a sigmoid
output gate per head (``g_proj``: d x h; ``gating="per-element"``: d x h·d_head), pre-norm
blocks, dense SwiGLU layers first (``mlp_layer_types``, of width ``intermediate_size``), then
SwiGLU experts chosen by a sigmoid router (top-k renormalised; its score-correction bias a buffer,
not a parameter) plus a plain shared expert of ``share_expert_dim``.

transformers has no causal-LM class for this configuration alone: the decoder is read only as the
text_config of a vision--language model (``vlm_held_moe.py``), never as a model of its own.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .attention_moe import ADDED, _attention, _dense_and_windows, _family, _per_layer
from .fields import Fields, Reader, layer_types, llama_like

TEXT_FAMILY = _family(
    "step3p5", "Step 3.5 (text): GQA with per-head Q/K norms and a sigmoid output gate per head, dense first "
    "layers then sigmoid-routed experts plus a shared expert",
    {**ADDED, "attn_gate": "sigmoid", "attn_gate_per_head": True, "router_score_bias": False}, gqa=True,
    qk_norm="head", norm_offset=True, moe=True, router="sigmoid", shared_expert="plain", dense_layers=3)

_CLAMP = ("the clamped SwiGLU of swiglu_limits / swiglu_limits_shared (gate and up clamped before their product) "
          "is counted as a SwiGLU: the same parameters and matmuls; the clamps (elementwise) are not modelled")


def _heads(f: Fields, h: int, types: list) -> None:
    """num_sliding_attention_heads and per_layer_config: the sliding layers' head count, which
    symgpt models only equal to num_attention_heads."""
    sliding = f.cfg.get("num_sliding_attention_heads")
    f.used.add("num_sliding_attention_heads")
    if "sliding_attention" in types and sliding not in (None, h):
        raise SymgptError(f"{f.where}: num_sliding_attention_heads other than num_attention_heads is not modelled")
    per_layer = f.cfg.get("per_layer_config") or {}
    f.used.add("per_layer_config")
    if not isinstance(per_layer, dict) or any(not isinstance(v, dict) or set(v) - {"num_attention_heads"}
                                              or v.get("num_attention_heads", h) != h for v in per_layer.values()):
        raise SymgptError(f"{f.where}: per_layer_config other than num_attention_heads equal in every layer is not "
                          "modelled")
    if "attention_other_setting" in f.cfg:
        raise SymgptError(f"{f.where}: the legacy field attention_other_setting is not read; give "
                          "num_sliding_attention_heads")


def read(f: Fields):
    """transformers' Step3p7TextConfig (model_type step3p5)."""
    f.rename({"num_local_experts": "n_routed_experts", "moe_num_experts": "n_routed_experts",
              "moe_top_k": "num_experts_per_tok", "share_expert_dims": "share_expert_dim",
              "num_attention_groups": "num_key_value_heads", "num_mtp_layers": "num_nextn_predict_layers"})
    rope = f.cfg.get("rope_parameters")
    cfg = dict(f.cfg)
    if isinstance(rope, dict) and rope and all(isinstance(v, dict) or v is None for v in rope.values()):
        cfg.pop("rope_parameters")  # one entry per layer type: positions, no parameters, no matmul
        f.cfg = cfg
        f.used.add("rope_parameters")
    flags, sizes = llama_like(f, dict(V=128815, d=4096, d_ff=11264, L=45, h=64, h_kv=8, T_max=128000,
                                      head_dim=128))
    flags["rotary_pct"] = None
    flags["activation"] = f.activation("hidden_act", "silu")
    _attention(f, flags)
    L, h = sizes["L"], sizes["h"]
    if f.bool("mlp_bias", False):
        raise SymgptError(f"{f.where}: mlp_bias=true is not modelled for Step 3.5")
    if f.bool("use_bidirectional_attention", False):
        raise SymgptError(f"{f.where}: use_bidirectional_attention=true is not modelled")
    if f.cfg.get("mlp_layer_types") is None and "moe_layers_enum" in f.cfg:
        raise SymgptError(f"{f.where}: the legacy field moe_layers_enum is not read; give mlp_layer_types")
    types = layer_types(f, L, ["full_attention"] * L)
    _heads(f, h, types)
    window = f.int("sliding_window", None, optional=True)
    mlp = _per_layer(f, "mlp_layer_types", L, ("dense", "sparse"), ["dense"] * min(3, L) + ["sparse"] * (L - 3))
    moe_ff = f.int("moe_intermediate_size", 1280)
    _dense_and_windows(f, flags, sizes, [t == "dense" for t in mlp], types, window)
    if flags["moe"]:
        sizes["d_ff"] = moe_ff
        sizes["E"] = f.int("n_routed_experts", 288)
        sizes["k"] = f.int("num_experts_per_tok", 8)
        flags.update(shared_expert="plain", shared_ff=f.int("share_expert_dim", 1280), router="sigmoid",
                     topk_norm=True, router_score_bias=False)
    else:
        f.silent("n_routed_experts", "num_experts_per_tok", "share_expert_dim")
    gating = f.cfg.get("gating", True)
    f.used.add("gating")
    if gating not in (True, "per-head", "per-element"):
        raise SymgptError(f"{f.where}: gating={gating!r} is not modelled (true, 'per-head' or 'per-element')")
    flags.update(attn_gate="sigmoid", attn_gate_per_head=gating != "per-element")
    if any(f.cfg.get(k) for k in ("swiglu_limits", "swiglu_limits_shared")):
        f.notes.append(_CLAMP)
    mtp = f.int("num_nextn_predict_layers", 0, minimum=0)
    if mtp:
        f.notes.append(f"the {mtp} multi-token-prediction layers are not built by transformers' model (their "
                       "weights are ignored on loading): not counted")
    # scores and routed-output scales, the MTP layers' kinds: no parameters, no matmul
    f.silent("query_pre_attn_scalar", "moe_router_scaling_factor", "swiglu_limits", "swiglu_limits_shared",
             "mtp_layer_types", "mtp_mlp_layer_types", "partial_rotary_factors", "output_router_logits")
    return "step3p5", flags, sizes


TEXT_READERS = {"step3p5": Reader(read, ())}

# its config.json is read only as Step3p7's text_config (vlm_held_moe.py): no reader of its own
FAMILIES = (TEXT_FAMILY,)
READERS: dict = {}
PRESETS: tuple = ()
