"""Llama 4's text model (Meta 2025, the Llama 4 Scout and Maverick model cards; transformers'
``Llama4ForCausalLM``, ``Llama4TextConfig``): grouped-query attention, mixture-of-experts layers
(a sigmoid-scored top-k router, E gated experts and a shared expert) interleaved with dense
layers (``interleave_moe_layer_step``), and every ``no_rope_layer_interval``-th layer without
positions ("NoPE": no rotary and no query/key norm); the other layers rotate queries and keys and
then L2-normalise each head (a parameter-free RMSNorm, ``use_qk_norm``).

Three things transformers' modules do that symgpt counts in its own way, each said on the answer:

* experts: ``Llama4TextMoe`` runs every expert on every token (the router's sigmoid scores scale
  each expert's input, zero for the experts not chosen), so its forward FLOPs -- what
  FlopCounterMode counts -- have E experts per token. The family's flag ``all_experts`` (on by
  default) counts that; off, the k routed experts a dispatching kernel runs per token;
* chunked attention (``attention_chunk_size``: each query sees the keys of its own chunk) is
  counted as full causal attention, which is what eager attention computes (the mask only hides
  the other chunks): exact for T up to the chunk size, more than a chunked kernel computes beyond;
* the NoPE layers' attention-temperature scaling of the queries (``attn_temperature_tuning``) is
  an elementwise product not modelled (no parameters, no matmul FLOPs).
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .base import Preset
from .decoders import decoder_family
from .fields import Fields, Reader, llama_like

_ADDED = {"all_experts": True, "moe_every": 1, "nope_every": 4, "qk_norm_affine": False}
_HELP = {
    "all_experts": "every expert runs on every token, as transformers' Llama4TextMoe computes (FLOPs of E "
                   "experts per token); false: the k routed experts per token",
    "moe_every": "every s-th layer has experts (interleave_moe_layer_step), the others a dense FFN of width "
                 "dense_ff",
    "nope_every": "every p-th layer has no positions: no rotary and no query/key norm (no_rope_layer_interval); "
                  "unset: none",
    "qk_norm_affine": "the query/key norms have a learned scale (false: Llama 4's L2 norm of each head)",
}

FAMILIES = (
    decoder_family("llama4_text", "Llama 4 (text): GQA, interleaved MoE layers (sigmoid top-k router, shared "
                   "expert; every expert runs on every token), NoPE layers, L2 query/key norm after RoPE",
                   added=_ADDED, added_help=_HELP, gqa=True, moe=True, shared_expert="plain", router="sigmoid",
                   topk_norm=False, qk_norm="head", qk_norm_after_rope=True, dense_ff=16384),
)


def _every(f: Fields, indices: list[int], L: int, what: str) -> int | None:
    """The period s of layers ``s-1, 2s-1, ...`` (None when *indices* is empty); another pattern raises."""
    if not indices:
        return None
    s = indices[0] + 1
    if indices != list(range(s - 1, L, s)):
        raise SymgptError(f"{f.where}: {what} other than every s-th layer (layers s-1, 2s-1, ...) is not modelled")
    return s


def read(f: Fields):
    """transformers' Llama4TextConfig."""
    flags, sizes = llama_like(f, dict(V=202048, d=5120, d_ff=8192, L=48, h=40, h_kv=8, head_dim=128,
                                      T_max=131072))
    L = sizes["L"]
    if "d_head" not in sizes:
        sizes["d_head"] = 128
    bias = f.bool("attention_bias", False)
    qk = f.bool("use_qk_norm", True)
    flags.update(qkv_bias=bias, proj_bias=bias, window=False, full_every=None, qk_norm_affine=False,
                 qk_norm="head" if qk else "none", qk_norm_after_rope=qk,
                 dense_ff=f.int("intermediate_size_mlp", 16384))
    sizes["E"] = f.int("num_local_experts", 16)
    sizes["k"] = f.int("num_experts_per_tok", 1)
    step = f.int("interleave_moe_layer_step", 1)
    moe = f.cfg.get("moe_layers")
    f.used.add("moe_layers")
    if moe is None:
        moe = list(range(step - 1, L, step))
    if not isinstance(moe, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in moe):
        raise SymgptError(f"{f.where}: field 'moe_layers' must be a list of layer indices")
    s = _every(f, sorted(set(moe)), L, "moe_layers")
    flags.update(moe=s is not None, moe_every=s)
    if s is None:
        sizes.pop("E"), sizes.pop("k")
        flags["shared_expert"] = "none"
    interval = f.int("no_rope_layer_interval", 4)
    rope = f.cfg.get("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(L)]
    f.used.add("no_rope_layers")
    if not isinstance(rope, list) or len(rope) != L or not set(rope) <= {0, 1}:
        raise SymgptError(f"{f.where}: field 'no_rope_layers' must list 0 or 1 for each of the {L} layers")
    flags["nope_every"] = _every(f, [i for i, r in enumerate(rope) if not r], L, "no_rope_layers")
    chunk = f.int("attention_chunk_size", 8192, optional=True)
    types = f.cfg.get("layer_types")
    f.used.add("layer_types")
    if types is None:
        types = ["chunked_attention" if r and chunk is not None else "full_attention" for r in rope]
    if not isinstance(types, list) or len(types) != L or not set(types) <= {"chunked_attention", "full_attention"}:
        raise SymgptError(f"{f.where}: field 'layer_types' must list 'chunked_attention' or 'full_attention' for "
                          f"each of the {L} layers")
    notes = []
    if flags["moe"]:
        notes.append("experts: transformers' Llama4TextMoe runs every expert on every token, so the forward FLOPs "
                     "count E experts per token (flag all_experts=false counts the k routed ones)")
    if "chunked_attention" in types:
        n = types.count("chunked_attention")
        notes.append(f"chunked attention ({n} layers, chunks of attention_chunk_size={chunk} tokens) is counted as "
                     "full causal attention, as eager attention computes it: a chunked kernel and its cache do less "
                     "once T exceeds the chunk")
    if f.bool("attn_temperature_tuning", True) and flags["nope_every"]:
        notes.append("the NoPE layers' query temperature scaling (attn_temperature_tuning) is an elementwise "
                     "product not modelled: no parameters and no matmul FLOPs, its elementwise work and saved "
                     "tensors are not counted")
    if notes:
        f.notes.append("; ".join(notes))
    f.silent("floor_scale", "attn_scale", "attention_chunk_size")
    return "llama4_text", flags, sizes


READERS = {"llama4_text": Reader(read, ("Llama4ForCausalLM",))}

PRESETS: tuple[Preset, ...] = (
    Preset("llama-4-scout", "llama4_text",
           {"L": 48, "h": 40, "h_kv": 8, "d_head": 128, "d": 5120, "d_ff": 8192, "V": 202048,
            "T_max": 10485760, "E": 16, "k": 1},
           source="Meta 2025 (Llama 4 model card); meta-llama/Llama-4-Scout-17B-16E-Instruct, its text model",
           note="107,769,861,120 parameters in the text model; the checkpoint's safetensors hold "
                "108,641,793,536, the rest (871,932,416) its vision encoder and projector, not counted here. "
                "Published: 17B active, 109B total"),
    Preset("llama-4-maverick", "llama4_text",
           {"L": 48, "h": 40, "h_kv": 8, "d_head": 128, "d": 5120, "d_ff": 8192, "V": 202048,
            "T_max": 1048576, "E": 128, "k": 1},
           flags={"moe_every": 2},
           source="Meta 2025 (Llama 4 model card); meta-llama/Llama-4-Maverick-17B-128E-Instruct, its text model",
           note="400,711,848,960 parameters in the text model; the checkpoint's safetensors hold "
                "401,583,781,376, the rest (871,932,416) its vision encoder and projector, not counted here. "
                "Published: 17B active, 400B total. MoE every second layer, dense FFN between"),
)
