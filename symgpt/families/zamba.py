"""Zamba (Zyphra 2024; Glorioso et al., "Zamba: A Compact 7B SSM Hybrid Model") and Zamba2 (Zyphra
2024, arXiv:2411.15242): Mamba layers among which hybrid layers run a transformer block whose
weights are shared -- counted once, run at every use (``blocks/zamba.py`` builds them). Read from
transformers' ZambaConfig and Zamba2Config.

Zamba's Mamba mixer (ZambaMambaMixer) splits its channels into ``n_mamba_heads`` heads with their
own x_proj and dt_proj: the same parameters and matmul work as one Mamba-1 mixer of d_inner
channels (a head's projections are a block of the full one), so it is the mamba family's mixer.
Zamba2's is a Mamba-2 mixer (Zamba2MambaMixer). The scans are counted as the mamba family counts
them (transformers' PyTorch path); at inference the Mamba layers keep a recurrent state
(``inference.state``) and each use of the shared attention its own KV cache.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {"version": 1, "tied": True, "proj_bias": False, "out_proj_bias": False, "conv_bias": True,
         "bcdt_norm": False, "ssm_norm": True, "activation": "gelu", "mlp_bias": False,
         "mamba_layers": 63, "hybrid_layers": 13, "mem_blocks": 1, "adapters": False, "adapter_rank": 128,
         "rotary": False, "loss": True}
CHOICES = {"activation": ("gelu", "silu", "gelu_tanh", "relu")}
FLAG_HELP = {
    "version": "1: Zamba's Mamba mixers (selective scan); 2: Zamba2's Mamba-2 mixers (chunked SSD scan)",
    "tied": "the LM head is the token embedding (tie_word_embeddings)",
    "proj_bias": "the Mamba in_proj has a bias",
    "out_proj_bias": "the Mamba out_proj has a bias",
    "conv_bias": "the Mamba causal conv1d has a bias",
    "bcdt_norm": "RMSNorms of Δ, B and C before the selective scan (none in Zamba)",
    "ssm_norm": "the Mamba-2 mixer's grouped RMSNorm of its gated output",
    "activation": "the shared block's MLP activation (hidden_act)",
    "mlp_bias": "the shared block's MLP projections have biases (Zamba2: add_bias_linear)",
    "mamba_layers": "plain Mamba layers (default: ZambaConfig's / Zamba2Config's default pattern)",
    "hybrid_layers": "hybrid layers: the shared transformer block, a d -> d linear of its own, then a Mamba layer",
    "mem_blocks": "shared transformer blocks, used in turn by the hybrid layers (Zamba2: num_mem_blocks)",
    "adapters": "Zamba2: per-use LoRA adapters on Q, K and V (use_shared_attention_adapter)",
    "adapter_rank": "Zamba2: the rank of the per-use LoRA adapters (adapter_rank; the MLP's always exist)",
    "rotary": "RoPE on the shared attention's queries and keys (Zamba2: use_mem_rope)",
    "loss": "the cross-entropy loss of training",
}
_ATTN = ("h", "h_kv", "d_head", "d_ff")
_BUILD = Ref("symgpt.families.blocks.zamba", "build")

#: Zamba's flags: no LoRA adapters (Zamba2's)
_ZAMBA_FLAGS = {k: v for k, v in FLAGS.items() if k not in ("adapters", "adapter_rank")}

FAMILIES = (
    Family(name="zamba", description="Zamba: Mamba layers among hybrid layers that run one shared transformer "
                                     "block over [hidden; embeddings] (weights counted once, run at every use)",
           flags=_ZAMBA_FLAGS, sizes=("V", "d", "d_inner", "d_state", "d_conv", "r_dt", "h", "d_ff"),
           optional=("h_kv", "d_head"), build=partial(_BUILD, name="zamba"), flag_help=FLAG_HELP, choices=CHOICES),
    Family(name="zamba2", description="Zamba2: Mamba-2 layers among hybrid layers that run shared transformer "
                                      "blocks in turn, with per-use LoRA adapters",
           flags={**FLAGS, "version": 2, "mamba_layers": 45, "hybrid_layers": 9}, sizes=("V", "d", "d_inner", "d_state", "d_conv", "h_ssm", "G_ssm",
                                                 "Q_chunk", "h", "d_ff"),
           optional=("h_kv", "d_head"), build=partial(_BUILD, name="zamba2"), flag_help=FLAG_HELP,
           choices=CHOICES),
)

#: transformers' layer types (and their legacy names)
_KINDS = {"linear_attention": "mamba", "mamba": "mamba", "hybrid": "hybrid"}


def _tied(f: Fields) -> bool:
    """tie_word_embeddings: transformers 5.24 ties every tied-weight key of the model, the shared
    blocks' copies included, only when it is true (``get_expanded_tied_weights_keys``); with false
    each hybrid layer builds a block of its own. symgpt models the shared blocks, so refuses it."""
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: tie_word_embeddings false is not modelled: transformers then ties none of "
                          "its tied weights, so each hybrid layer gets an unshared copy of the shared block")
    return True


def _layers(f: Fields, default: list[str]) -> tuple[int, int]:
    """(plain Mamba layers, hybrid layers) of ``layers_block_type`` (transformers' default pattern
    when the file gives none)."""
    value = f.cfg.get("layers_block_type", f.cfg.get("layer_types"))
    f.used.update({"layers_block_type", "layer_types", "num_hidden_layers"})
    if value is None:
        value = default
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v in _KINDS for v in value):
        raise SymgptError(f"{f.where}: field 'layers_block_type' must be a list of 'linear_attention' (Mamba) and "
                          "'hybrid' layers")
    kinds = [_KINDS[v] for v in value]
    return kinds.count("mamba"), kinds.count("hybrid")


def _act(f: Fields) -> str:
    act = f.activation("hidden_act", "gelu")
    if act not in CHOICES["activation"]:
        raise SymgptError(f"{f.where}: hidden_act {f.cfg.get('hidden_act')!r} is not modelled for Zamba's MLP")
    return act


def _attention(f: Fields, sizes: dict) -> None:
    d = sizes["d"]
    sizes["h"] = f.int("num_attention_heads", sizes["h"])
    kv = f.int("num_key_value_heads", sizes["h"], optional=True)
    sizes["h_kv"] = kv if kv is not None else sizes["h"]
    if sizes["h"] % sizes["h_kv"]:
        raise SymgptError(f"{f.where}: num_attention_heads {sizes['h']} is not a multiple of num_key_value_heads")


def read_zamba(f: Fields):
    """transformers' ZambaConfig: ``layers_block_type`` (default: layers 0 and 1 Mamba, layer 2
    hybrid, then hybrid where (i - 3) mod ``attn_layer_period`` = ``attn_layer_offset``); one shared
    ZambaAttentionDecoderLayer (its copies tied to the first hybrid layer's); multi-head Mamba-1
    mixers (ZambaMambaMixer); a gated MLP (ZambaMLP)."""
    d = f.int("hidden_size", 3712)
    L = f.int("num_hidden_layers", 76)
    period, offset = f.int("attn_layer_period", 6), f.int("attn_layer_offset", 4, minimum=0)
    default = ["mamba", "mamba", "hybrid"] + ["hybrid" if i % period == offset else "mamba" for i in range(L - 3)]
    mamba_layers, hybrid_layers = _layers(f, default)
    sizes = {"V": f.int("vocab_size", 32000), "d": d, "d_ff": f.int("intermediate_size", 14848), "h": 16}
    _attention(f, sizes)
    width = f.int("attention_hidden_size", 2 * d, optional=True)
    if width is not None and width != 2 * d:
        raise SymgptError(f"{f.where}: attention_hidden_size {width} is not 2 * hidden_size (the shared block reads "
                          "[hidden; embeddings])")
    head = f.int("attention_head_dim", None, optional=True)
    sizes["d_head"] = head if head is not None else 2 * d // sizes["h"]
    expand, heads = f.int("mamba_expand", 2), f.int("n_mamba_heads", 2)
    if expand * d % heads:
        raise SymgptError(f"{f.where}: mamba_expand * hidden_size must be divisible by n_mamba_heads "
                          "(ZambaConfig's check)")
    value, _ = f.get("mamba_dt_rank", "auto")
    rank = -(-d // 16) if value == "auto" else f.int("mamba_dt_rank")
    sizes.update(d_inner=expand * d, d_state=f.int("mamba_d_state", 16), d_conv=f.int("mamba_d_conv", 4), r_dt=rank)
    if f.str("hidden_mamba_act", "silu") != "silu":
        raise SymgptError(f"{f.where}: hidden_mamba_act {f.cfg['hidden_mamba_act']!r} is not modelled "
                          "(the Mamba mixer's convolution activation; the kernels path supports silu)")
    bias = f.bool("mamba_proj_bias", False)
    flags = {"version": 1, "tied": _tied(f), "proj_bias": bias, "out_proj_bias": bias,
             "conv_bias": f.bool("mamba_conv_bias", True), "activation": _act(f), "mamba_layers": mamba_layers or None,
             "hybrid_layers": hybrid_layers or None}
    f.silent("max_position_embeddings", "use_mamba_kernels", "use_associative_scan", "num_logits_to_keep",
             "time_step_min", "time_step_max", "time_step_floor")
    return "zamba", flags, sizes


def read_zamba2(f: Fields):
    """transformers' Zamba2Config: ``layers_block_type`` (default: Zyphra's 54-layer pattern);
    ``num_mem_blocks`` shared Zamba2AttentionDecoderLayers used in turn by the hybrid layers; each
    hybrid use with its own LoRA adapters on the MLP's gate_up_proj (always) and on Q, K and V
    (``use_shared_attention_adapter``); Mamba-2 mixers (Zamba2MambaMixer: the conv1d always has a
    bias); RoPE on the shared attention with ``use_mem_rope``."""
    d = f.int("hidden_size", 2560)
    default = (["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3
               + ["hybrid"] + ["mamba"] * 2)
    mamba_layers, hybrid_layers = _layers(f, default)
    ff = f.int("intermediate_size", 4 * d, optional=True)
    sizes = {"V": f.int("vocab_size", 32000), "d": d, "d_ff": ff if ff is not None else 4 * d, "h": 32}
    _attention(f, sizes)
    if 2 * d % sizes["h"]:
        raise SymgptError(f"{f.where}: 2 * hidden_size is not a multiple of num_attention_heads")
    sizes["d_head"] = 2 * d // sizes["h"]
    adapters = f.bool("use_shared_attention_adapter", False)
    if adapters and sizes["h_kv"] != sizes["h"]:
        raise SymgptError(f"{f.where}: use_shared_attention_adapter with num_key_value_heads != num_attention_heads "
                          "(the adapters' output is 2 * hidden_size wide)")
    expand, heads = f.int("mamba_expand", 2), f.int("n_mamba_heads", 8)
    inner = expand * d
    if inner % heads:
        raise SymgptError(f"{f.where}: mamba_expand * hidden_size is not a multiple of n_mamba_heads")
    groups = f.int("mamba_ngroups", 1)
    if heads % groups:
        raise SymgptError(f"{f.where}: n_mamba_heads {heads} is not a multiple of mamba_ngroups {groups}")
    sizes.update(d_inner=inner, h_ssm=heads, G_ssm=groups, d_state=f.int("mamba_d_state", 64),
                 d_conv=f.int("mamba_d_conv", 4), Q_chunk=f.int("chunk_size", 256))
    bias = f.bool("add_bias_linear", False)
    rope = f.bool("use_mem_rope", False)
    flags = {"version": 2, "tied": _tied(f), "proj_bias": bias, "out_proj_bias": bias,
             "conv_bias": True, "activation": _act(f), "mlp_bias": bias, "mamba_layers": mamba_layers or None,
             "hybrid_layers": hybrid_layers or None, "mem_blocks": f.int("num_mem_blocks", 1),
             "adapters": adapters, "adapter_rank": f.int("adapter_rank", 128), "rotary": rope}
    if rope:
        from .fields import rotary_pct
        if rotary_pct(f) is not None:
            raise SymgptError(f"{f.where}: a partial rotary factor is not modelled for Zamba2's shared attention")
    else:
        f.silent("rope_parameters", "partial_rotary_factor")
    # the conv1d's bias is always built (Zamba2MambaMixer ignores use_conv_bias); the rest is
    # initialisation, numerics, generation and the kernels' choice
    f.silent("use_conv_bias", "max_position_embeddings", "use_mamba_kernels", "use_mem_eff_path",
             "use_long_context", "num_logits_to_keep", "time_step_min", "time_step_max", "time_step_floor",
             "time_step_limit", "hybrid_layer_ids", "attention_hidden_size", "attention_head_dim", "kv_channels",
             "num_query_groups", "mamba_headdim")
    return "zamba2", flags, sizes


READERS = {
    "zamba": Reader(read_zamba, ("ZambaForCausalLM",)),
    "zamba2": Reader(read_zamba2, ("Zamba2ForCausalLM",)),
}

PRESETS = (
    Preset("zamba2-2.7b", "zamba2",
           {"V": 32000, "d": 2560, "d_ff": 10240, "h": 32, "d_head": 160, "d_inner": 5120, "d_state": 64,
            "d_conv": 4, "h_ssm": 80, "G_ssm": 1, "Q_chunk": 256},
           flags={"mamba_layers": 45, "hybrid_layers": 9, "mem_blocks": 2, "adapters": False, "adapter_rank": 128,
                  "rotary": False},
           source="Zyphra 2024 (Zamba2, arXiv:2411.15242); the config.json of Zyphra's Zamba2-2.7B implementation "
                  "(github.com/Zyphra/Zamba2) with its MambaConfig defaults (mamba_headdim 64, mamba_ngroups 1, "
                  "no rotary) and Mamba-2 layer's chunk_size 256",
           note="2,662,214,560 parameters; published: 2.7B. 54 layers: 45 Mamba-2, 9 hybrid using 2 shared blocks in "
                "turn (ABAB), each use with its own LoRA (rank 128) on the MLP's gate/up projection; the output head "
                "is the embedding matrix (tied)"),
)
