"""Hybrid language models: Mamba mixers among attention layers, dense FFNs and mixtures of experts,
one layer pattern declaring which kind each layer is (``blocks/hybrid.py`` builds them; each kind
of layer is a stack of its own, counted × its number of layers). Read from transformers'
BambaConfig (IBM 2025, Bamba), NemotronHConfig (NVIDIA 2025, Nemotron-H), GraniteMoeHybridConfig
(IBM 2025, Granite 4.0) and JambaConfig (AI21 2024, "Jamba: A Hybrid Transformer-Mamba Language
Model").

The scans are counted as the mamba family counts them (transformers' PyTorch path: the sequential
selective scan, the chunked SSD scan); at inference the Mamba layers keep a recurrent state
(``derive.recurrent``: ``inference.state``, constant in T) and the attention layers a KV cache.
"""

from __future__ import annotations

from fractions import Fraction
from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader, rotary_pct

FLAGS = {
    "version": 2, "tied": False, "proj_bias": False, "conv_bias": True, "bcdt_norm": False,
    "bcdt_affine": False, "activation": "silu", "gated": True, "mlp_bias": False, "qkv_bias": False,
    "attn_out_bias": False, "out_proj_bias": False, "ssm_norm": True, "rotary_pct": 100, "router": "softmax",
    "topk_norm": True, "n_group": None,
    "topk_group": None, "shared_expert": "none", "shared_ff": None, "expert_ff": None, "loss": True,
}
CHOICES = {"activation": ("silu", "relu2", "gelu"), "router": ("softmax", "sigmoid", "topk_softmax"),
           "shared_expert": ("none", "plain")}
#: the layer pattern: how many layers of each kind (blocks/hybrid.py's WORDS), each kind a stack
COUNTS = {"mamba_layers": "M", "mamba_mlp_layers": "M-", "mamba_moe_layers": "ME", "attention_layers": "*",
          "attention_mlp_layers": "*-", "attention_moe_layers": "*E", "mlp_layers": "-", "moe_layers": "E",
          "parallel_mlp_layers": "P-"}
FLAGS.update({name: None for name in COUNTS})
FLAGS["mamba_mlp_layers"] = 1
_LETTERS = ("M: Mamba mixer, *: attention, -: dense FFN, E: mixture of experts, P: attention and Mamba in "
            "parallel, each a pre-norm residual branch")
FLAG_HELP = {
    **{name: f"layers of kind {word!r} ({_LETTERS})" for name, word in COUNTS.items()},
    "version": "1: Mamba's selective scan (MambaMixer); 2: Mamba-2's chunked SSD scan (Mamba2Mixer)",
    "tied": "the LM head is the token embedding (tie_word_embeddings)",
    "proj_bias": "the Mamba in_proj and out_proj have biases",
    "conv_bias": "the Mamba causal conv1d has a bias",
    "bcdt_norm": "RMSNorms of Δ, B and C before the selective scan (Jamba)",
    "bcdt_affine": "those norms have weights (Jamba)",
    "out_proj_bias": "the Mamba out_proj has a bias",
    "ssm_norm": "the Mamba-2 mixer's grouped RMSNorm of its gated output (Falcon-H1: mamba_rms_norm)",
    "activation": "the FFN activation",
    "gated": "the FFN is gated (SwiGLU); false: up -> act -> down",
    "mlp_bias": "the FFN projections have biases",
    "qkv_bias": "the attention Q, K, V projections have biases",
    "attn_out_bias": "the attention output projection has a bias",
    "rotary_pct": "percent of the head dimension rotated by RoPE (unset: attention without positions)",
    "router": "softmax, sigmoid (with group-limited routing) or topk_softmax router scores",
    "topk_norm": "the top-k router weights are renormalised to sum to 1",
    "n_group": "expert groups of group-limited routing (unset: none)",
    "topk_group": "groups kept by group-limited routing",
    "shared_expert": "none, or plain: an expert every token runs",
    "shared_ff": "width of the shared expert (unset: d_ff)",
    "expert_ff": "width of each routed expert (unset: d_ff)",
    "loss": "the cross-entropy loss of training",
}
_ATTN = ("h", "h_kv", "d_head", "d_ff")
#: the experts and experts per token: bound when the pattern has mixture-of-experts layers
_OPTIONAL = ("E", "k")
_BUILD = Ref("symgpt.families.blocks.hybrid", "build")

FAMILIES = (
    Family(name="hybrid", description="Mamba-2 hybrids (Bamba, Nemotron-H, Granite 4.0-H): a layer pattern of "
                                      "Mamba-2 mixers, attention, dense FFNs and mixtures of experts",
           flags=FLAGS, sizes=("V", "d", "d_inner", "d_state", "d_conv", "h_ssm", "G_ssm", "Q_chunk") + _ATTN,
           build=partial(_BUILD, name="hybrid"), flag_help=FLAG_HELP, choices=CHOICES, optional=_OPTIONAL),
    Family(name="hybrid1", description="Mamba-1 hybrids (Jamba): a layer pattern of selective-scan mixers, "
                                       "attention, dense FFNs and mixtures of experts",
           flags={**FLAGS, "version": 1}, sizes=("V", "d", "d_inner", "d_state", "d_conv", "r_dt") + _ATTN,
           build=partial(_BUILD, name="hybrid1"), flag_help=FLAG_HELP, choices=CHOICES, optional=_OPTIONAL),
)


def _layer_list(f: Fields, key: str, L: int, allowed: dict) -> list[str]:
    """A list field of layer kinds, each mapped through *allowed*; its length must be L."""
    value = f.cfg.get(key)
    f.used.add(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        raise SymgptError(f"{f.where}: field {key!r} must be a list of {', '.join(map(repr, allowed))}")
    if len(value) != L:
        raise SymgptError(f"{f.where}: {key} lists {len(value)} layers, num_hidden_layers is {L}")
    return [allowed[v] for v in value]


#: the Mamba-2 fields of BambaConfig and GraniteMoeHybridConfig
_BAMBA_KEYS = dict(heads="mamba_n_heads", head_dim="mamba_d_head", groups="mamba_n_groups", state="mamba_d_state",
                   conv="mamba_d_conv", chunk="mamba_chunk_size", expand="mamba_expand")


def _mamba2(f: Fields, sizes: dict, *, keys: dict, defaults: dict) -> None:
    """The Mamba-2 mixer's sizes from the config fields *keys* names (``heads``, ``head_dim``,
    ``groups``, ``state``, ``conv``, ``chunk`` and, where the class has it, ``expand``);
    d_inner = heads · head_dim (checked against expand · d where the class has expand)."""
    heads_key, head_dim_key, groups_key = keys["heads"], keys["head_dim"], keys["groups"]
    state_key, conv_key, chunk_key, expand_key = keys["state"], keys["conv"], keys["chunk"], keys.get("expand")
    heads = f.int(heads_key, defaults["heads"])
    value, _ = f.get(head_dim_key, defaults["head_dim"])
    if value == "auto":
        head_dim = f.int(expand_key, 2) * sizes["d"] // heads
    else:
        head_dim = f.int(head_dim_key)
    if expand_key is not None and heads * head_dim != f.int(expand_key, 2) * sizes["d"]:
        raise SymgptError(f"{f.where}: {heads_key} * {head_dim_key} must equal {expand_key} * hidden_size "
                          f"({f.int(expand_key, 2) * sizes['d']}) (the configuration class's check)")
    groups = f.int(groups_key, defaults["groups"])
    if heads % groups:
        raise SymgptError(f"{f.where}: {heads_key} {heads} is not a multiple of {groups_key} {groups}")
    sizes.update(d_inner=heads * head_dim, h_ssm=heads, G_ssm=groups, d_state=f.int(state_key, defaults["state"]),
                 d_conv=f.int(conv_key, 4), Q_chunk=f.int(chunk_key, defaults["chunk"]))


def _attention(f: Fields, sizes: dict, h_default: int, kv_default) -> None:
    sizes["h"] = f.int("num_attention_heads", h_default)
    kv = f.int("num_key_value_heads", kv_default, optional=True)
    sizes["h_kv"] = kv if kv is not None else sizes["h"]
    if sizes["d"] % sizes["h"]:
        raise SymgptError(f"{f.where}: hidden_size {sizes['d']} is not a multiple of num_attention_heads")
    sizes["d_head"] = sizes["d"] // sizes["h"]


def _act(f: Fields, key: str, default: str) -> str:
    act = f.activation(key, default)
    if act not in CHOICES["activation"]:
        raise SymgptError(f"{f.where}: {key} {f.cfg.get(key)!r} is not modelled for this hybrid's FFN")
    return act


def _counts(words: list[str]) -> dict:
    """The count flags of a layer pattern (every kind set, None where it has no layer)."""
    found = {name: words.count(word) or None for name, word in COUNTS.items()}
    return found


def read_bamba(f: Fields):
    """transformers' BambaConfig: ``attn_layer_indices`` are the attention layers (BambaAttention,
    half the head dimension rotated), every other layer a Mamba-2 mixer (BambaMixer); each layer
    then a SwiGLU MLP (BambaMLP)."""
    sizes = {"V": f.int("vocab_size", 128000), "d": f.int("hidden_size", 4096),
             "d_ff": f.int("intermediate_size", 14336)}
    L = f.int("num_hidden_layers", 32)
    _attention(f, sizes, 32, 8)
    _mamba2(f, sizes, keys=_BAMBA_KEYS,
            defaults=dict(heads=128, head_dim="auto", groups=1, state=256, chunk=256))
    value = f.cfg.get("attn_layer_indices")
    f.used.add("attn_layer_indices")
    if value is not None and (not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                                      for i in value)):
        raise SymgptError(f"{f.where}: field 'attn_layer_indices' must be a list of layer indices")
    attn = set(value or ())
    layers = _counts(["*-" if i in attn else "M-" for i in range(L)])
    bias = f.bool("attention_bias", False)
    flags = {**layers, "tied": f.bool("tie_word_embeddings", False),
             "proj_bias": f.bool("mamba_proj_bias", False),
             "out_proj_bias": f.bool("mamba_proj_bias", False), "conv_bias": f.bool("mamba_conv_bias", True),
             "activation": _act(f, "hidden_act", "silu"), "mlp_bias": f.bool("mlp_bias", False),
             "qkv_bias": bias, "attn_out_bias": bias,
             "rotary_pct": rotary_pct(f, default=Fraction(1, 2)) or 100}
    f.silent("max_position_embeddings", "time_step_limit", "z_loss_coefficient", "num_logits_to_keep")
    return "hybrid", flags, sizes


#: NemotronHConfig's layer kinds (and the letters of its legacy hybrid_override_pattern)
_NEMOTRON = {"linear_attention": "M", "full_attention": "*", "mlp": "-", "moe": "E",
             "mamba": "M", "attention": "*"}


def read_nemotron_h(f: Fields):
    """transformers' NemotronHConfig: ``layers_block_type`` (or the legacy ``hybrid_override_pattern``,
    one letter per layer) makes each layer one pre-norm branch: a Mamba-2 mixer
    (NemotronHMamba2Mixer, d_inner = mamba_num_heads · mamba_head_dim), attention without position
    embeddings (NemotronHAttention), a squared-ReLU MLP (NemotronHMLP) or a mixture of squared-ReLU
    experts (NemotronHMoE: a sigmoid router with group-limited top-k, one shared expert)."""
    if f.cfg.get("layers_block_type") is not None:
        words = _layer_list(f, "layers_block_type", len(f.cfg["layers_block_type"]), _NEMOTRON)
    elif f.cfg.get("hybrid_override_pattern") is not None:
        pattern = f.str("hybrid_override_pattern")
        if not pattern or set(pattern) - set("M*-E"):
            raise SymgptError(f"{f.where}: hybrid_override_pattern {pattern!r} must be letters M, *, - and E")
        words = list(pattern)
    else:
        words = ["M", "E", "*", "-"]
    f.used.update({"layers_block_type", "hybrid_override_pattern", "num_hidden_layers"})
    f.used.add("moe_latent_size")
    if f.cfg.get("moe_latent_size") is not None:
        raise SymgptError(f"{f.where}: moe_latent_size (the experts' latent projections) is not modelled")
    if f.str("mamba_hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: mamba_hidden_act {f.cfg['mamba_hidden_act']!r} is not modelled "
                          "(transformers' kernels path supports silu)")
    sizes = {"V": f.int("vocab_size", 131072), "d": f.int("hidden_size", 4096),
             "d_ff": f.int("intermediate_size", 21504), "h": f.int("num_attention_heads", 32),
             "d_head": f.int("head_dim", 128), "E": f.int("n_routed_experts", 8), "k": f.int("num_experts_per_tok", 2)}
    kv = f.int("num_key_value_heads", 8, optional=True)
    sizes["h_kv"] = kv if kv is not None else sizes["h"]
    heads, head_dim = f.int("mamba_num_heads", 128), f.int("mamba_head_dim", 64)
    groups = f.int("n_groups", 8)
    if heads % groups:
        raise SymgptError(f"{f.where}: mamba_num_heads {heads} is not a multiple of n_groups {groups}")
    sizes.update(d_inner=heads * head_dim, h_ssm=heads, G_ssm=groups, d_state=f.int("ssm_state_size", 128),
                 d_conv=f.int("conv_kernel", 4), Q_chunk=f.int("chunk_size", 128))
    mlp_bias = f.bool("mlp_bias", False)
    if mlp_bias and "E" in words:
        raise SymgptError(f"{f.where}: mlp_bias with MoE layers is not modelled (the shared expert has biases, "
                          "the routed experts none)")
    n_group = f.int("n_group", 1)
    flags = {**_counts(words), "tied": f.bool("tie_word_embeddings", False), "proj_bias": f.bool("use_bias", False),
             "out_proj_bias": f.bool("use_bias", False),
             "conv_bias": f.bool("use_conv_bias", True), "activation": _act(f, "mlp_hidden_act", "relu2"),
             "gated": False, "mlp_bias": mlp_bias, "rotary_pct": None, "router": "sigmoid",
             "topk_norm": f.bool("norm_topk_prob", True), "n_group": n_group, "topk_group": f.int("topk_group", 1),
             "shared_expert": "plain", "shared_ff": f.int("moe_shared_expert_intermediate_size", 7688),
             "expert_ff": f.int("moe_intermediate_size", 7688)}
    if sizes["E"] % n_group:
        raise SymgptError(f"{f.where}: n_routed_experts {sizes['E']} is not a multiple of n_group {n_group}")
    # attention_bias and sliding_window are read by no NemotronH module; the multi-token-prediction
    # layers are not part of NemotronHForCausalLM; the rest is initialisation and numerics
    f.silent("attention_bias", "sliding_window", "max_position_embeddings", "use_mamba_kernels", "expand",
             "mamba_proj_bias", "mamba_ssm_cache_dtype", "n_shared_experts", "moe_shared_expert_overlap",
             "routed_scaling_factor", "num_nextn_predict_layers", "mtp_layers_block_type", "time_step_min",
             "time_step_max", "time_step_limit", "time_step_floor", "residual_in_fp32", "rescale_prenorm_residual",
             "num_logits_to_keep")
    return "hybrid", flags, sizes


def read_granitemoehybrid(f: Fields):
    """transformers' GraniteMoeHybridConfig (Granite 4.0-H): ``layer_types`` makes each layer a
    Mamba-2 mixer (GraniteMoeHybridMambaLayer) or attention (RoPE when ``position_embedding_type``
    is ``rope``, none otherwise), then a mixture of SwiGLU experts (GraniteMoeHybridMoE: the softmax
    of the top-k logits) plus a shared SwiGLU of width ``shared_intermediate_size``; with
    ``num_local_experts`` 0 that shared SwiGLU alone. Its scalar multipliers are elementwise."""
    from .granite import multipliers

    L = f.int("num_hidden_layers", 32)
    if f.cfg.get("layer_types") is not None:
        mixers = _layer_list(f, "layer_types", L, {"linear_attention": "M", "mamba": "M", "full_attention": "*",
                                                    "attention": "*"})
    else:
        f.used.add("layer_types")
        mixers = ["M"] * L
    if _act(f, "hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_act {f.cfg['hidden_act']!r} is not modelled (it is also the Mamba "
                          "mixer's convolution activation; transformers' kernels path supports silu)")
    experts = f.int("num_local_experts", 8, minimum=0)
    shared = f.int("shared_intermediate_size", 1024)
    sizes = {"V": f.int("vocab_size", 32000), "d": f.int("hidden_size", 4096),
             "d_ff": f.int("intermediate_size", 11008) if experts else shared}
    k = f.int("num_experts_per_tok", 2)
    if experts:
        sizes.update(E=experts, k=k)
    _attention(f, sizes, 32, None)
    _mamba2(f, sizes, keys=_BAMBA_KEYS,
            defaults=dict(heads=128, head_dim="auto", groups=1, state=256, chunk=256))
    position = f.str("position_embedding_type", None, optional=True)
    if position not in (None, "rope", "nope"):  # the Granite 4.0-H files say "nope": no rotary, as null
        raise SymgptError(f"{f.where}: position_embedding_type {position!r} is not modelled (rope, nope or null)")
    bias = f.bool("attention_bias", False)
    ffn = "E" if experts else "-"
    flags = {**_counts([m + ffn for m in mixers]), "tied": f.bool("tie_word_embeddings", False),
             "proj_bias": f.bool("mamba_proj_bias", False),
             "out_proj_bias": f.bool("mamba_proj_bias", False), "conv_bias": f.bool("mamba_conv_bias", True),
             "activation": "silu", "qkv_bias": bias, "attn_out_bias": bias,
             "rotary_pct": (rotary_pct(f) or 100) if position == "rope" else None,
             "router": "topk_softmax", "topk_norm": False,
             "shared_expert": "plain" if experts else "none", "shared_ff": shared if experts else None}
    if position != "rope":
        f.silent("rope_parameters", "partial_rotary_factor")
    multipliers(f, ("embedding_multiplier", "residual_multiplier", "logits_scaling", "attention_multiplier"),
                "Granite 4.0-H")
    f.silent("max_position_embeddings", "time_step_limit")
    return "hybrid", flags, sizes


def read_jamba(f: Fields):
    """transformers' JambaConfig: layer i is attention (JambaAttention, no position embeddings) when
    i mod ``attn_layer_period`` = ``attn_layer_offset``, else a Mamba mixer (JambaMambaMixer: the
    selective scan with weighted RMSNorms of Δ, B and C); its FFN a mixture of SwiGLU experts
    (softmax router, top-k weights not renormalised) when i mod ``expert_layer_period`` =
    ``expert_layer_offset``, else a SwiGLU MLP."""
    L = f.int("num_hidden_layers", 32)
    ap, ao = f.int("attn_layer_period", 8), f.int("attn_layer_offset", 4, minimum=0)
    ep, eo = f.int("expert_layer_period", 2), f.int("expert_layer_offset", 1, minimum=0)
    if ao >= ap or eo >= ep:
        raise SymgptError(f"{f.where}: a layer offset must be smaller than its period (JambaConfig's check)")
    experts = f.int("num_experts", 16)
    if _act(f, "hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_act {f.cfg['hidden_act']!r} is not modelled (it is also the Mamba "
                          "mixer's convolution activation; transformers' kernels path supports silu)")
    words = [("*" if i % ap == ao else "M") + ("E" if i % ep == eo and experts > 1 else "-") for i in range(L)]
    d = f.int("hidden_size", 4096)
    value, _ = f.get("mamba_dt_rank", "auto")
    rank = -(-d // 16) if value == "auto" else f.int("mamba_dt_rank")
    sizes = {"V": f.int("vocab_size", 65536), "d": d, "d_ff": f.int("intermediate_size", 14336),
             "d_inner": f.int("mamba_expand", 2) * d,
             "d_state": f.int("mamba_d_state", 16), "d_conv": f.int("mamba_d_conv", 4), "r_dt": rank}
    _attention(f, sizes, 32, 8)
    k = f.int("num_experts_per_tok", 2)
    if experts > 1:
        sizes.update(E=experts, k=k)
    flags = {**_counts(words), "version": 1, "tied": f.bool("tie_word_embeddings", False),
             "proj_bias": f.bool("mamba_proj_bias", False),
             "out_proj_bias": f.bool("mamba_proj_bias", False), "conv_bias": f.bool("mamba_conv_bias", True),
             "bcdt_norm": True, "bcdt_affine": True, "activation": "silu", "rotary_pct": None,
             "router": "softmax", "topk_norm": False}
    f.silent("max_position_embeddings", "use_mamba_kernels", "use_mambapy", "use_associative_scan")
    return "hybrid1", flags, sizes


def read_falcon_h1(f: Fields):
    """transformers' FalconH1Config: every layer attention (RoPE) and a Mamba-2 mixer side by side
    on the same normed input, their outputs summed (FalconH1DecoderLayer), then a SwiGLU MLP. The
    mixer's width is ``mamba_d_ssm`` (else mamba_expand · hidden_size); its grouped RMSNorm only
    with ``mamba_rms_norm``; out_proj's bias is ``projectors_bias``. Its µP multipliers (embedding,
    key, attention and SSM in/out, MLP, the in_proj's per-stream ``ssm_multipliers``, LM head) are
    elementwise."""
    d = f.int("hidden_size", 4096)
    value, _ = f.get("mamba_d_ssm", 1024)
    inner = f.int("mamba_expand", 2) * d if value is None else f.int("mamba_d_ssm", 1024)
    f.used.add("mamba_expand")  # the width when mamba_d_ssm is null
    heads = f.int("mamba_n_heads", 128)
    hd, _ = f.get("mamba_d_head", "auto")
    head_dim = inner // heads if hd == "auto" else f.int("mamba_d_head")
    if heads * head_dim != inner:
        raise SymgptError(f"{f.where}: mamba_n_heads * mamba_d_head must equal the mixer's width {inner} "
                          "(FalconH1Config's check)")
    groups = f.int("mamba_n_groups", 1)
    if heads % groups:
        raise SymgptError(f"{f.where}: mamba_n_heads {heads} is not a multiple of mamba_n_groups {groups}")
    sizes = {"V": f.int("vocab_size", 128000), "d": d, "d_ff": f.int("intermediate_size", 14336),
             "d_inner": inner, "h_ssm": heads, "G_ssm": groups, "d_state": f.int("mamba_d_state", 256),
             "d_conv": f.int("mamba_d_conv", 4), "Q_chunk": f.int("mamba_chunk_size", 256)}
    _attention(f, sizes, 32, 8)
    head = f.int("head_dim", None, optional=True)
    if head is not None:
        sizes["d_head"] = head
    if _act(f, "hidden_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_act {f.cfg['hidden_act']!r} is not modelled (it is also the Mamba "
                          "mixer's convolution activation; transformers' kernels path supports silu)")
    norm = f.bool("mamba_rms_norm", False)
    if norm and f.bool("mamba_norm_before_gate", True):
        raise SymgptError(f"{f.where}: mamba_rms_norm with mamba_norm_before_gate (the norm before the gate) is "
                          "not modelled")
    f.used.add("mamba_norm_before_gate")
    bias = f.bool("attention_bias", False)
    flags = {**_counts(["P-"] * f.int("num_hidden_layers", 32)), "tied": f.bool("tie_word_embeddings", False),
             "proj_bias": f.bool("mamba_proj_bias", False), "out_proj_bias": f.bool("projectors_bias", False),
             "conv_bias": f.bool("mamba_conv_bias", True), "ssm_norm": norm, "activation": "silu",
             "mlp_bias": f.bool("mlp_bias", False), "qkv_bias": bias, "attn_out_bias": bias,
             "rotary_pct": rotary_pct(f) or 100}
    f.notes.append("Falcon-H1 multiplies the embeddings, keys, the attention and SSM inputs and outputs, the MLP "
                   "gate and output, the in_proj streams and the logits by scalars (its µP multipliers): "
                   "elementwise products not counted (no parameters, no matmul)")
    f.silent("lm_head_multiplier", "embedding_multiplier", "mlp_multipliers", "key_multiplier",
             "attention_out_multiplier", "attention_in_multiplier", "ssm_multipliers", "ssm_in_multiplier",
             "ssm_out_multiplier", "max_position_embeddings", "time_step_limit", "num_logits_to_keep")
    return "hybrid", flags, sizes


READERS = {
    "falcon_h1": Reader(read_falcon_h1, ("FalconH1ForCausalLM",)),
    "jamba": Reader(read_jamba, ("JambaForCausalLM",)),
    "granitemoehybrid": Reader(read_granitemoehybrid, ("GraniteMoeHybridForCausalLM",)),
    "bamba": Reader(read_bamba, ("BambaForCausalLM",)),
    "nemotron_h": Reader(read_nemotron_h, ("NemotronHForCausalLM",)),
}

PRESETS = (
    Preset("jamba-1.5-mini", "hybrid1",
           {"V": 65536, "d": 4096, "d_ff": 14336, "d_inner": 8192, "d_state": 16, "d_conv": 4, "r_dt": 256, "h": 32,
            "h_kv": 8, "d_head": 128, "E": 16, "k": 2},
           flags={"bcdt_norm": True, "bcdt_affine": True, "rotary_pct": None, "topk_norm": False,
                  "mamba_mlp_layers": 12, "mamba_moe_layers": 16, "attention_mlp_layers": 4},
           source="AI21 Labs 2024 (Jamba-1.5); ai21labs/AI21-Jamba-1.5-Mini its config.json on the Hugging Face Hub",
           note="51,570,323,328 parameters; published: 52B in total, 12B active. 32 layers: attention every 8th "
                "(offset 4), 16 experts (2 active) every 2nd (offset 1); no positional encoding"),
    Preset("nemotron-h-8b", "hybrid",
           {"V": 131072, "d": 4096, "d_ff": 21504, "h": 32, "d_head": 128, "E": 8, "k": 2, "h_kv": 8, "d_inner": 8192,
            "h_ssm": 128, "G_ssm": 8, "d_state": 128, "d_conv": 4, "Q_chunk": 128},
           flags={"activation": "relu2", "gated": False, "rotary_pct": None, "router": "sigmoid", "n_group": 1,
                  "topk_group": 1, "shared_expert": "plain", "shared_ff": 7688, "expert_ff": 7688, "mamba_layers": 24,
                  "mamba_mlp_layers": None, "attention_layers": 4, "mlp_layers": 24},
           source="NVIDIA 2025 (Nemotron-H); nvidia/Nemotron-H-8B-Base-8K its config.json on the Hugging Face Hub",
           note="8,100,852,736 parameters; published: 8B. 52 layers of the pattern "
                "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-: 24 Mamba-2, 4 attention, 24 squared-ReLU "
                "MLP; no mixture of experts (E and k are the configuration class's defaults, used by no layer)"),
    # Mamba-2 hybrids whose files are assembled from their publishers' sources (tests/configs/assembled/)
    Preset("bamba-9b", "hybrid",
           {"V": 128256, "d": 4096, "d_ff": 14336, "h": 32, "h_kv": 8, "d_head": 128, "d_inner": 8192,
            "h_ssm": 128, "G_ssm": 1, "d_state": 128, "d_conv": 4, "Q_chunk": 256},
           flags={"rotary_pct": 50, "mamba_mlp_layers": 29, "attention_mlp_layers": 3},
           source="IBM 2024 (Bamba); ibm-ai-platform/Bamba-9B, its shapes as IBM's foundation-model-stack "
                  "declares the checkpoint (fms/models/bamba.py, _bamba_9_8b_config) and as fms-fsdp trained it "
                  "(fms_fsdp/utils/config_utils.py, model variant mamba_9.8b)",
           note="9,780,235,392 parameters; published: 9B (9.78B, foundation-model-stack/bamba's model table). "
                "32 layers: attention at 9, 18 and 27 (32 heads, 8 key/value heads, half of each head rotated), "
                "29 Mamba-2 mixers of 128 heads of 64 (one group, state 128); every layer then a SwiGLU MLP of "
                "14,336; untied output head"),
    Preset("granite-4.0-h-tiny", "hybrid",
           {"V": 100352, "d": 1536, "d_ff": 512, "E": 64, "k": 6, "h": 12, "h_kv": 4, "d_head": 128,
            "d_inner": 3072, "h_ssm": 48, "G_ssm": 1, "d_state": 128, "d_conv": 4, "Q_chunk": 256},
           flags={"tied": True, "rotary_pct": None, "router": "topk_softmax", "topk_norm": False,
                  "shared_expert": "plain", "shared_ff": 1024, "mamba_mlp_layers": None, "mamba_moe_layers": 36,
                  "attention_moe_layers": 4},
           source="IBM 2025 (Granite 4.0); ibm-granite/granite-4.0-h-tiny, its model card's architecture table "
                  "and the Granite 4.0 vocabulary of foundation-model-stack (fms/models/granite_moe_hybrid.py)",
           note="6,939,037,248 parameters = the safetensors total of ibm-granite/granite-4.0-h-tiny-base; "
                "published: 7B in total, 1B active. 40 layers: 4 of attention (12 heads of 128, 4 key/value "
                "heads, no positional encoding) and 36 Mamba-2 mixers (48 heads of 64, state 128), each then "
                "64 SwiGLU experts of 512 (6 active) beside a shared expert of 1,024; tied output head"),
)
