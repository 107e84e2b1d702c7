"""Serving capacity of models with recurrent layers, as vLLM's hybrid KV-cache manager sizes it.

vLLM keeps, for every running sequence, one fixed-size state slot in each recurrent layer beside
the paged KV blocks of its attention layers. Read from vLLM's source (vllm-project/vllm):

- the slot: ``MambaSpec.page_size_bytes`` = the sum of the state tensors' elements times their
  dtype's bytes, and ``max_memory_usage_bytes`` = one page per sequence (no prefix caching, no
  speculative blocks) -- ``vllm/v1/kv_cache_interface.py`` at 001cabc1be16a59a70d720ed61a13b678c060a18;
- the state tensors: ``MambaStateShapeCalculator`` (Mamba-1: conv (d_conv - 1, d_inner) and SSM
  (d_inner, d_state); Mamba-2: conv (d_conv - 1, d_inner + 2·groups·d_state) and SSM (heads,
  head_dim, d_state); gated delta rule: conv (kernel - 1, 2·k_heads·k_dim + v_heads·v_dim) and
  (v_heads, v_dim, k_dim)), all at the model's dtype (``MambaStateDtypeCalculator`` with
  ``mamba_cache_dtype`` and ``mamba_ssm_cache_dtype`` "auto") --
  ``vllm/model_executor/layers/mamba/mamba_utils.py`` at 02d710837549a368073552333f66d714477415d2;
- one page size for all layers: ``HybridAttentionMambaModelConfig.verify_and_update_config`` raises
  the attention block to 16·ceil(state page / (16 · attention bytes per token per layer)) tokens
  (when the one asked for is smaller) and pads the state page up to that attention page --
  ``vllm/model_executor/models/config.py`` at 0144dd5b0d2d9ef9ac2651a3ab6efa83d0497ea9, which
  also turns prefix caching off for these models;
- groups of layers: ``_get_kv_cache_groups_uniform_page_size`` takes g = the fewest layers of one
  kind (the most when max < 1.5·min) and splits each kind into ceil(n / g) groups of g layers
  (the last padded); ``get_num_blocks``: num_blocks = available // page // g; and
  ``get_max_concurrency_for_kv_cache_config``: num_blocks / (blocks one sequence holds: ceil(T /
  block) for each attention group, one for each state group) -- ``vllm/v1/core/kv_cache_utils.py``
  at 001cabc1be16a59a70d720ed61a13b678c060a18. A model without attention is one group of all its
  layers, one page each.

So a sequence of T tokens holds (G_attn·ceil(T / block) + G_state) · page · g bytes, and the
sequences that fit are floor(budget / that) (floor(floor(budget / (page·g)) / blocks) is the same
number). The budget is :func:`symgpt.derive.serving.budget_parts`'.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .inference_setup import setup
from .quantity import Quantity
from .recurrent import recurrent_ops
from .step import generated

SOURCES = ("vLLM's hybrid KV-cache manager (vllm-project/vllm): MambaSpec and page sizes in vllm/v1/kv_cache_interface.py "
           "and the groups, num_blocks = available // page // g and the concurrency in vllm/v1/core/kv_cache_utils.py "
           "(001cabc1), the state shapes and dtypes in vllm/model_executor/layers/mamba/mamba_utils.py (02d71083), the "
           "attention block raised to hold one state page in vllm/model_executor/models/config.py (0144dd5b)")

#: vLLM's attention block sizes are multiples of this (config.py: "FA only supports ... multiple of 16")
ALIGN = 16


def _int(model, v, what) -> int:
    v = v if isinstance(v, int) or v is None else v.xreplace(dict(model.bindings))
    if not (isinstance(v, int) or (v is not None and v.is_Integer)):
        raise SymgptError(f"{model.name}: the recurrent state's {what} is not a number ({v}): bind it with --set")
    return int(v)


def _layers(model, flags, *keys) -> int:
    return sum(int(flags[k]) for k in keys if flags.get(k) is not None)


def state_elements(model) -> tuple[int, int, int]:
    """(recurrent layers, attention layers, state elements per recurrent layer per sequence) at
    vLLM's shapes, for the families whose state vLLM's MambaStateShapeCalculator gives; any other
    refused in one line."""
    fam, f = model.family.name, model.flags
    z = {k: model.sizes.get(k) for k in ("d_inner", "d_state", "d_conv", "G_ssm", "L")}
    if fam in ("mamba", "hybrid1"):       # Mamba-1 (Mamba, Falcon Mamba; Jamba)
        n, a = ((_int(model, z["L"], "layer count"), 0) if fam == "mamba" else
                (_layers(model, f, "mamba_layers", "mamba_mlp_layers", "mamba_moe_layers"),
                 _layers(model, f, "attention_layers", "attention_mlp_layers", "attention_moe_layers")))
        di, ds, dc = (_int(model, z[k], k) for k in ("d_inner", "d_state", "d_conv"))
        return n, a, (dc - 1) * di + di * ds
    if fam in ("mamba2", "hybrid"):       # Mamba-2 (Mamba-2; Bamba, Nemotron-H, Granite 4.0-H)
        if f.get("parallel_mlp_layers"):
            raise SymgptError(f"{model.name}: serving capacity is not modelled for layers that run attention and a "
                              "Mamba mixer side by side (Falcon-H1)")
        n, a = ((_int(model, z["L"], "layer count"), 0) if fam == "mamba2" else
                (_layers(model, f, "mamba_layers", "mamba_mlp_layers", "mamba_moe_layers"),
                 _layers(model, f, "attention_layers", "attention_mlp_layers", "attention_moe_layers")))
        di, ds, dc, g = (_int(model, z[k], k) for k in ("d_inner", "d_state", "d_conv", "G_ssm"))
        return n, a, (dc - 1) * (di + 2 * g * ds) + di * ds
    if fam == "qwen3_next" and f.get("linear_mixer") == "gated_delta":
        n = _int(model, model.sizes.get("L_lin"), "linear layer count")
        hk, hv, dk, dv, kc = (int(f[k]) for k in ("gdn_k_heads", "gdn_v_heads", "gdn_k_dim", "gdn_v_dim", "gdn_conv"))
        return n, _int(model, model.sizes["L"], "layer count") - n, (kc - 1) * (2 * hk * dk + hv * dv) + hv * dv * dk
    kinds = sorted({model.arch.graph.nodes[n]["op"].kind for n in recurrent_ops(model.arch)})
    raise SymgptError(f"{model.name}: serving capacity is modelled for Mamba, Mamba-2 and gated-delta-rule layers as "
                      f"vLLM keeps their state; not for these recurrent layers ({', '.join(kinds)})")


@dataclass(frozen=True)
class StatePlan:
    """vLLM's cache layout for one model: the (raised) attention block, the page every layer's
    block takes, the group size g and the groups of each kind."""

    setup: object
    block: int
    state_page: sympy.Expr      # one recurrent layer's state slot for one sequence, unpadded
    page: sympy.Expr            # one block of one layer (the state slot padded to it)
    group: int                  # g: layers per group (vLLM's group_size)
    attn_groups: int
    state_groups: int
    state_layers: int
    attn_layers: int
    T: sympy.Symbol

    def blocks(self) -> sympy.Expr:
        """Blocks one sequence of T tokens holds: ceil(T/block) per attention group, one per state group."""
        return self.attn_groups * sympy.ceiling(self.T / self.block) + self.state_groups

    def block_bytes(self) -> sympy.Expr:
        """One block of one group: a page in each of the g memory pools."""
        return self.page * self.group


def _group_size(counts) -> int:
    lo, hi = min(counts), max(counts)
    return hi if hi < lo * sympy.Rational(3, 2) else lo


def plan(model, block: int, **options) -> StatePlan:
    """vLLM's layout of the KV blocks and state slots of a model with recurrent layers."""
    from .serving import _check_block, cached_layers

    _check_block(block)
    s = setup(model, **options)
    if s.chips > 1:
        raise SymgptError(f"{model.name}: serving over tensor-parallel devices is not modelled for recurrent layers "
                          "(how vLLM splits their heads and state)")
    n, a, elements = state_elements(model)
    state_page = elements * s.act      # vLLM: the state at the model's dtype ("auto")
    T = generated(model.arch)
    if a == 0:
        return StatePlan(s, block, state_page, state_page, n, 0, 1, n, 0, T)
    layers = cached_layers(model, s)
    if any(c.window is not None for c in layers):
        raise SymgptError(f"{model.name}: serving capacity is not modelled for sliding-window attention beside "
                          "recurrent layers")
    per_token = sympy.Add(*[c.copies * c.per_token for c in layers]).xreplace(s.bindings) / a
    if not per_token.is_number:
        raise SymgptError(f"{model.name}: the attention layers' bytes per token are not a number ({per_token}): "
                          "bind their sizes with --set")
    raised = ALIGN * sympy.ceiling(state_page / (ALIGN * per_token))
    blk = int(max(block, raised))
    g = _group_size((a, n))
    return StatePlan(s, blk, state_page, blk * per_token, g, -(-a // g), -(-n // g), n, a, T)


def _q(p, name, parts, unit, extra):
    notes = [SOURCES, "bytes: " + ", ".join(p.setup.labels),
             f"state of {p.state_layers} recurrent layers at the model's dtype, one slot per sequence in each: "
             f"{p.state_page} bytes a layer"]
    if p.attn_layers:
        notes.append(f"{p.attn_layers} attention layers in blocks of {p.block} tokens (raised to hold one state slot, "
                     f"vLLM's padding of the state page to the attention page: {p.page} bytes); groups of {p.group} "
                     f"layers: {p.attn_groups} of attention, {p.state_groups} of state"
                     + (" (the last padded with empty layers)" if (p.attn_layers % p.group or p.state_layers % p.group)
                        else ""))
    notes.append("prefix caching, speculative decoding and tensor parallelism of recurrent layers are not modelled")
    return Quantity(name, tuple(parts), p.setup.bindings, unit, "vllm-hybrid", tuple(notes + list(extra)))


def block_bytes(model, block: int, **options) -> Quantity:
    p = plan(model, block, **options)
    return _q(p, "serving.block_bytes", [("block", p.block_bytes())], "bytes",
              [f"one block: a page of {p.page} bytes in each of the {p.group} memory pools (one layer of a group each)"])


def kv_per_sequence(model, block: int, **options) -> Quantity:
    p = plan(model, block, **options)
    parts = [("state_slots", p.state_groups * p.block_bytes())]
    if p.attn_groups:
        parts.insert(0, ("attention_blocks", p.attn_groups * sympy.ceiling(p.T / p.block) * p.block_bytes()))
    return _q(p, "serving.kv_per_sequence", parts, "bytes", [
        "one sequence of T tokens: ceil(T/block) blocks of each attention group and one block (its state slots) "
        "of each state group"])


def max_sequences(model, utilization, workspace_tokens: int, block: int, **options) -> Quantity:
    from .serving import _check_fits, budget_parts

    p = plan(model, block, **options)
    budget = sympy.Add(*[e for _, e in budget_parts(model, utilization, workspace_tokens, **options)])
    per = p.blocks() * p.block_bytes()
    q = _q(p, "serving.max_sequences", [("sequences", sympy.floor(budget / per))], "sequences", [
        "concurrent sequences of T tokens that fit: floor(KV budget / bytes per sequence), vLLM's "
        "num_blocks // blocks per sequence (vLLM's scheduler also caps running sequences at max_num_seqs, "
        "not applied here)"])
    _check_fits(q, budget)
    return q


def state_per_sequence(model, block: int, **options) -> Quantity:
    """The state one sequence keeps in all recurrent layers, unpadded (vLLM's MambaSpec pages)."""
    p = plan(model, block, **options)
    return _q(p, "serving.state_per_sequence", [("state", p.state_layers * p.state_page)], "bytes",
              ["one state slot in every recurrent layer, before padding to the attention page"])


def kv_budget(model, utilization, workspace_tokens: int, block: int, **options) -> Quantity:
    from .serving import budget_parts

    p = plan(model, block, **options)
    return _q(p, "serving.kv_budget", budget_parts(model, utilization, workspace_tokens, **options), "bytes", [
        f"memory for the KV blocks and state slots on the device: {sympy.Rational(utilization)} of its memory (vLLM's "
        f"gpu_memory_utilization) less the weights and an activation workspace (the largest single activation of a "
        f"prefill of {workspace_tokens} tokens, a lower bound of vLLM's profiled peak)"])
