"""DeepSeek Sparse Attention (DSA) decoders: DeepSeek-V3's layout (multi-latent attention, dense
layers then routed and shared experts) with a lightning indexer in every attention layer that
selects the ``index_topk`` keys each query reads (``blocks/dsa.py``):

* DeepSeek-V3.2 (DeepSeek-AI 2025, "DeepSeek-V3.2-Exp"; transformers' ``DeepseekV32ForCausalLM``);
* GLM-5 (Z.ai; transformers' ``GlmMoeDsaForCausalLM``), whose indexer rotates interleaved pairs.

Counted under the *dense-masked* convention: transformers' eager attention computes all T×T
scores and masks those outside the top-k (``blocks/dsa.py``). The indexer runs under
``torch.no_grad`` in transformers: it adds forward FLOPs, no backward FLOPs and no saved
activations; its key is cached per layer beside the MLA latent.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS
from .deepseek import MLA_FLAGS, MLA_HELP
from .fields import Fields, Reader

DSA_FLAGS = {
    "index_heads": 64,              # index_n_heads
    "index_head_dim": 128,
    "index_topk": 2048,
    "index_rope_interleave": False,  # GLM-5's indexer rotates interleaved pairs
}

#: A.X-K2's additions (its own family only)
AXK2_FLAGS = {"q_gate": True, "gated_norm_rank": 16}
AXK2_HELP = {
    "q_gate": "one q_gate_proj of [norm(C_Q), C_Q] makes each head's query and a sigmoid output gate (A.X-K2)",
    "gated_norm_rank": "the rank of the gate after the attention norm, and the FFN norm of expert layers "
                       "(A.X-K2's AXK2GatedRMSNorm)",
}

DSA_HELP = {
    "index_heads": "the lightning indexer's heads (index_n_heads)",
    "index_head_dim": "each indexer head's dimensions (index_head_dim): also its cached key's width",
    "index_topk": "keys each query keeps (index_topk); eager attention still computes all T scores "
                  "and masks the rest",
    "index_rope_interleave": "the indexer's RoPE rotates interleaved pairs (GLM-5) instead of halves",
}


def _family(name, description, changes, mla, dsa, extra=None):
    return Family(
        name=name, description=description,
        flags=Extended(FLAGS, {"gqa": False, "moe": True, "shared_expert": "plain", **changes},
                       {**MLA_FLAGS, **mla, **DSA_FLAGS, **dsa, **(extra or {})}),
        sizes=("L", "d", "h", "V"), optional=("d_ff", "T_max", "E", "k"),
        build=partial(Ref("symgpt.families.blocks.mla", "build"), name=name),
        flag_help=Extended(FLAG_HELP, added={**MLA_HELP, **DSA_HELP, **({k: AXK2_HELP[k] for k in extra}
                                                                         if extra else {})}),
        choices=Extended(CHOICES))


FAMILIES = (
    _family("deepseek_v32", "DeepSeek-V3.2: DeepSeek-V3 with DeepSeek Sparse Attention (a lightning indexer "
            "selecting the top-k keys per query)",
            {"dense_layers": 3, "router": "sigmoid"}, {"n_group": 8, "topk_group": 4}, {}),
    _family("glm_moe_dsa", "GLM-5: multi-latent attention with DeepSeek Sparse Attention, 3 dense layers then "
            "routed (sigmoid) + shared experts",
            {"dense_layers": 3, "router": "sigmoid"},
            {"n_group": 1, "topk_group": 1, "q_lora_rank": 2048, "qk_nope_dim": 192, "v_head_dim": 256},
            {"index_heads": 32, "index_rope_interleave": True}),
    _family("axk2", "A.X-K2: DeepSeek Sparse Attention with a gated query projection and output gate, gated "
            "norms, 1 dense layer then routed (sigmoid) + shared experts",
            {"dense_layers": 1, "router": "sigmoid"},
            {"n_group": None, "topk_group": None, "q_lora_rank": 384, "kv_lora_rank": 128, "qk_nope_dim": 64,
             "qk_rope_dim": 32, "v_head_dim": 64},
            {"index_heads": 16}, AXK2_FLAGS),
)


def _layer_types(f: Fields, L: int):
    lt = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if lt is not None and (not isinstance(lt, list) or len(lt) != L or set(lt) != {"indexed_attention"}):
        raise SymgptError(f"{f.where}: layer_types other than 'indexed_attention' in each of the {L} layers "
                          "is not modelled")


def _dense_first(f: Fields, L: int, default_dense: int) -> int:
    mlp = f.cfg.get("mlp_layer_types")
    f.used.add("mlp_layer_types")
    first = f.int("first_k_dense_replace", default_dense, minimum=0)
    if mlp is None:
        n = min(first, L)
        mlp = ["dense"] * n + ["sparse"] * (L - n)
    if not isinstance(mlp, list) or len(mlp) != L or not set(mlp) <= {"sparse", "dense"}:
        raise SymgptError(f"{f.where}: field 'mlp_layer_types' must list 'sparse' or 'dense' for each of the "
                          f"{L} layers")
    dense = mlp.index("sparse") if "sparse" in mlp else L
    if dense == L or mlp != ["dense"] * dense + ["sparse"] * (L - dense):
        raise SymgptError(f"{f.where}: mlp_layer_types other than dense layers first, then expert layers, "
                          "is not modelled")
    return dense


def _read(f: Fields, name: str, D: dict):
    """transformers' DeepseekV32Config and its GlmMoeDsaConfig subclass: MLA with a query latent
    always (q_lora_rank), DeepSeek-V3's mixture, the indexer's sizes."""
    sizes = {"V": f.int("vocab_size", D["V"]), "d": f.int("hidden_size", D["d"]),
             "L": f.int("num_hidden_layers", D["L"]), "h": f.int("num_attention_heads", D["h"]),
             "T_max": f.int("max_position_embeddings", D["T_max"]),
             "d_ff": f.int("moe_intermediate_size", D.get("moe_ff", 2048)),
             "E": f.aliased("n_routed_experts", "num_local_experts", D.get("E", 256)),
             "k": f.int("num_experts_per_tok", 8)}
    kv = f.int("num_key_value_heads", D["h"], optional=True)
    if kv not in (None, sizes["h"]):
        raise SymgptError(f"{f.where}: multi-latent attention with num_key_value_heads != "
                          "num_attention_heads is not modelled")
    f.int("head_dim", None, optional=True)      # transformers sets it to qk_rope_head_dim
    f.int("qk_head_dim", None, optional=True)   # transformers derives it: nope + rope
    L = sizes["L"]
    _layer_types(f, L)
    dense = _dense_first(f, L, D.get("dense", 3))
    if f.bool("mlp_bias", False):  # (AXK2Config has no mlp_bias: read as its absence)
        raise SymgptError(f"{f.where}: mlp_bias=true is not modelled (transformers' experts have no biases)")
    q_rank = f.int("q_lora_rank", D["q_rank"], optional=True)
    if q_rank is None:
        raise SymgptError(f"{f.where}: q_lora_rank must be set: the indexer reads the query latent")
    shared = f.int("n_shared_experts", 1, minimum=0)
    rope = f.int("qk_rope_head_dim", D.get("rope", 64))
    index_dim = f.int("index_head_dim", 128)
    if index_dim < rope:
        raise SymgptError(f"{f.where}: index_head_dim ({index_dim}) below qk_rope_head_dim ({rope}): the "
                          "indexer rotates qk_rope_head_dim of its dimensions")
    flags = {"tied": f.bool("tie_word_embeddings", False), "activation": f.activation("hidden_act", "silu"),
             "attention_bias": f.bool("attention_bias", False),
             "q_lora_rank": q_rank,
             "kv_lora_rank": f.int("kv_lora_rank", D.get("kv_rank", 512)), "qk_nope_dim": f.int("qk_nope_head_dim", D["nope"]),
             "qk_rope_dim": rope, "v_head_dim": f.int("v_head_dim", D["v"]),
             "dense_ff": f.int("intermediate_size", D["ff"]), "dense_layers": dense or None,
             "shared_expert": "plain" if shared else "none", "shared_ff": shared * sizes["d_ff"] if shared else None,
             "router": "sigmoid", "topk_norm": f.bool("norm_topk_prob", True),
             "n_group": f.int("n_group", D["groups"][0], optional=True),
             "topk_group": f.int("topk_group", D["groups"][1], optional=True),
             "mtp_layers": None,
             "index_heads": f.int("index_n_heads", D["index_heads"]), "index_head_dim": index_dim,
             "index_topk": f.int("index_topk", 2048), "index_rope_interleave": D["interleave"]}
    f.silent("routed_scaling_factor", "output_router_logits")
    f.notes.append("DeepSeek Sparse Attention counted dense-masked, as transformers' eager path runs it: every "
                   "query's T attention scores are computed and those outside the indexer's top-k masked; the "
                   "indexer runs without gradient (no backward, nothing saved; its parameters get no gradient "
                   "in transformers, though gradient and optimizer memory count them)")
    return name, flags, sizes


def read_v32(f: Fields):
    """transformers' DeepseekV32Config."""
    return _read(f, "deepseek_v32", dict(V=129280, d=7168, L=61, h=128, T_max=163840, ff=18432, q_rank=1536,
                                         nope=128, v=128, groups=(8, 4), index_heads=64, interleave=False))


def read_glm_moe_dsa(f: Fields):
    """transformers' GlmMoeDsaConfig: DeepseekV32Config's fields, GLM-5's defaults, and
    ``indexer_types`` ('full': the layer runs its indexer; 'shared': it reuses the previous full
    layer's top-k, which is not modelled)."""
    L = f.int("num_hidden_layers", 78)
    types = f.cfg.get("indexer_types")
    f.used.add("indexer_types")
    if types is not None and (not isinstance(types, list) or len(types) != L or set(types) != {"full"}):
        raise SymgptError(f"{f.where}: indexer_types other than 'full' in each of the {L} layers (layers "
                          "sharing another layer's top-k) is not modelled")
    for k in ("index_topk_pattern", "index_topk_freq", "index_skip_topk_offset"):
        if k in f.cfg and types is None:
            raise SymgptError(f"{f.where}: field '{k}' (layers sharing another layer's top-k) is not modelled")
        f.used.add(k)
    return _read(f, "glm_moe_dsa", dict(V=154880, d=6144, L=78, h=64, T_max=202752, ff=12288, q_rank=2048,
                                        nope=192, v=256, groups=(1, 1), index_heads=32, interleave=True))


def read_axk2(f: Fields):
    """transformers' AXK2Config: DeepseekV32Config's fields with A.X-K2's defaults (no routing groups
    unless n_group is set), ``gated_norm_rank``, and the query/output gate always."""
    if f.cfg.get("moe_layer_freq") not in (None, 1) and f.cfg.get("mlp_layer_types") is None:
        raise SymgptError(f"{f.where}: moe_layer_freq other than 1 is not modelled")
    f.used.add("moe_layer_freq")
    name, flags, sizes = _read(f, "axk2", dict(V=163840, d=2048, L=48, h=32, T_max=131072, ff=5120, q_rank=384,
                                                nope=64, v=64, groups=(None, None), index_heads=16,
                                                interleave=False, dense=1, kv_rank=128, rope=32, moe_ff=512,
                                                E=128))
    n_group, keep = flags["n_group"], flags["topk_group"]
    if (n_group is None) != (keep is None):
        raise SymgptError(f"{f.where}: n_group and topk_group must be set together")
    flags["q_gate"] = True
    flags["gated_norm_rank"] = f.int("gated_norm_rank", 16)
    return name, flags, sizes


READERS = {"deepseek_v32": Reader(read_v32, ("DeepseekV32ForCausalLM",)),
           "axk2": Reader(read_axk2, ("AXK2ForCausalLM",)),
           "glm_moe_dsa": Reader(read_glm_moe_dsa, ("GlmMoeDsaForCausalLM",))}

PRESETS = ()
