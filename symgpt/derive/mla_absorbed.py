"""Multi-latent attention decoded in the absorbed form (``mla="absorbed"``; default ``expanded``).

transformers' ``DeepseekV3Attention`` (the graph ``families.blocks.mla`` declares) re-expands the
cached latent of every position through ``kv_b_proj`` at each step, then attends with per-head
keys and values. DeepSeek's own inference computes attention against the cached latent directly
(DeepSeek-AI 2024, "DeepSeek-V2", Sec. 2.1.3: W^UK absorbed into W^UQ, W^UV into W^O;
deepseek-ai/DeepSeek-V3 ``inference/model.py`` at 9b4e9788e4a3a731f7567338ed15d3ec549ce03b,
``MLA.forward``, the ``attn_impl == "absorb"`` branch; the FlashMLA decode kernel). Per layer, for
B sequences, q new tokens each, h heads, a cache of P = T + q positions (r_kv: kv_lora_rank;
d_nope, d_rope: the query/key head's parts; d_hv: the value head):

* ``kv_b_proj`` no longer reads the cache: its two halves act on the query side, per head,
  q_nope·W_UK (d_nope -> r_kv) and, after the attention, o_latent·W_UV (r_kv -> d_hv):
  2·B·q·h·r_kv·(d_nope + d_hv) FLOPs, its weight read once; it reads q_nope and the latent output
  (B·q·h·(d_nope + r_kv)) and writes the absorbed query and the value output (B·q·h·(r_kv + d_hv));
* scores: [q_nope·W_UK ; q_rope] against [latent ; rotary key] of every cached position, one
  shared "head" of r_kv + d_rope (``einsum("bshc,btc->bsht")`` plus ``einsum("bshr,btr->bsht")``):
  2·B·q·h·P·(r_kv + d_rope) FLOPs, reading the query and the cache (B·P·(r_kv + d_rope), KV dtype);
* values: the weights times the latent (``einsum("bsht,btc->bshc")``): 2·B·q·h·P·r_kv FLOPs,
  reading the latent again (B·P·r_kv; under ``attention=flash`` not again: FlashMLA reads each
  tile once for both products);
* the per-head keys and values, their split and the two concatenations are never formed: those
  ops leave the step; scale, mask and softmax over (B, h, q, P) and the output projection stay.

Under tensor parallelism (heads split) every device reads the whole latent and rotary key for
its heads: the cache reads are not divided among devices.

Only decode-like steps change (a decode step, a verification of draft tokens, and also a chunk of
a prompt after cached tokens, which vLLM labels prefill and computes expanded: not told apart
here); the prefill stays expanded: the serving engines that run MLA absorbed in decode compute the
prompt's attention with per-head keys and values (vLLM's MLA backend,
``vllm/v1/attention/backends/mla/common.py``, its module docstring: the "compute friendly"
approach for prefill, the "data-movement friendly" one for decode). DeepSeek's reference
``model.py`` applies its one ``attn_impl`` to every pass. The KV cache is the same in both forms
(the latent and the rotary key per token per layer).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import sympy

from ..core.errors import SymgptError
from ..graph import roles
from ..ops.base import Op, Work, numel
from .step import OpStep, Step

FORMS = ("expanded", "absorbed")

NOTES = {
    "expanded": ("multi-latent attention decoded as transformers' DeepseekV3Attention runs it: the cached "
                 "latent of every position re-expanded through kv_b_proj at each step, more work than the "
                 "absorbed form of DeepSeek's own inference (W_UK folded into the query, W_UV into the output, "
                 "attention over the latent: --mla absorbed), so its decode FLOPs and time are an upper bound"),
    "absorbed": ("multi-latent attention decoded absorbed, as DeepSeek's inference runs it (DeepSeek-V2 "
                 "Sec. 2.1.3; deepseek-ai/DeepSeek-V3 inference/model.py, attn_impl \"absorb\"): per head "
                 "q_nope·W_UK and o·W_UV on the query side, scores and values against the cached latent "
                 "and rotary key (r_kv + d_rope per position), read whole on every device; the prefill "
                 "stays expanded (per-head keys and values, as vLLM's MLA backend computes a prompt); "
                 "the KV cache is unchanged"),
}

#: the ops of an expanded MLA layer that the absorbed form never forms
_DROPPED = (roles.KV_UP_HEADS, roles.KEY_NOPE, roles.VALUE, roles.QUERY_PARTS, roles.KEY_PARTS)
#: roles every absorbed layer must hold, each once
_NEEDED = (roles.KV_UP, roles.QUERY_NOPE, roles.QUERY_ROPE, roles.SCORES, roles.VALUES) + _DROPPED


@dataclass(frozen=True)
class AbsorbedUp(Op):
    """kv_b_proj's weight used on the query side, per head: (B, h, q, d_nope)·W_UK -> r_kv and
    (B, h, q, r_kv)·W_UV -> d_hv (its inputs: those two activations)."""

    latent: sympy.Expr      # r_kv
    value: sympy.Expr       # d_hv
    kind = "absorbed_up"
    title = "W_UK, W_UV (absorbed)"

    def forward(self, inputs, out):
        q_nope, o_latent = inputs
        return (Work("matmul", numel(q_nope) * self.latent, tag="dense"),
                Work("matmul", numel(o_latent) * self.value, tag="dense"))


def has_mla(arch) -> bool:
    """Whether *arch* holds a multi-latent attention layer (an up-projection of the latent)."""
    return any(arch.role(n) == roles.KV_UP for n in arch.order)


def absorb(s, arch, st: Step) -> Step:
    """*st* as the Setup *s* prices it: a decode-like step of an MLA model under ``mla="absorbed"``
    in the absorbed form, any other step as it is."""
    if getattr(s, "mla", "expanded") != "absorbed" or st.phase != "decode":
        return st
    if not any(arch.role(o.node) == roles.KV_UP for o in st.ops):
        return st
    return _absorbed(arch, st, s.chips, s.attention == "flash")


def _layer(node: str) -> str:
    return node.rsplit("/", 1)[0]


@lru_cache(maxsize=64)
def _absorbed(arch, st: Step, chips: int, flash: bool) -> Step:
    layers: dict[str, dict] = {}
    for o in st.ops:
        if arch.role(o.node) == roles.KV_UP:
            layers[_layer(o.node)] = {}
    for o in st.ops:
        lay = _layer(o.node)
        if lay in layers:
            role = arch.role(o.node)
            if role in _NEEDED and role in layers[lay]:
                raise SymgptError(f"--mla absorbed: {lay} holds two {role} ops; only DeepSeek-V2/V3's "
                                  "multi-latent attention layer is modelled absorbed")
            layers[lay][role] = o
            if role == roles.SPARSE_MASK:
                _refuse(lay, "DeepSeek Sparse Attention's decode over its selected keys is not modelled absorbed")
    new = {}
    for lay, ops in layers.items():
        new.update(_layer_ops(arch, lay, ops, chips, flash))
    out = tuple(new.get(o.node, o) for o in st.ops if new.get(o.node, o) is not None)
    return replace(st, ops=out)


def _refuse(lay: str, why: str):
    raise SymgptError(f"--mla absorbed is modelled for DeepSeek-V2/V3's multi-latent attention layer; "
                      f"{lay}: {why}")


def _layer_ops(arch, lay, ops, chips, flash) -> dict:
    missing = [r for r in _NEEDED if r not in ops]
    if missing:
        _refuse(lay, f"no {missing[0]} op")
    up, scores, values = ops[roles.KV_UP], ops[roles.SCORES], ops[roles.VALUES]
    if [arch.role(i) for i in arch.inputs_of(scores.node)] != [roles.QUERY_PARTS, roles.KEY_PARTS]:
        _refuse(lay, "its scores read more than the assembled query and keys")
    if arch.role(arch.inputs_of(values.node)[1]) != roles.VALUE or scores.op.window is not None:
        _refuse(lay, "its values read something else than the up-projected values, or a window")
    b, h, q, d_nope = ops[roles.QUERY_NOPE].output
    d_rope = ops[roles.QUERY_ROPE].output[-1]
    latent = up.inputs[0][-1]
    d_hv = ops[roles.VALUE].output[-1]
    keys = values.inputs[0][-1]                                  # P = T + q cached positions
    wide = latent + d_rope
    o_lat = (b, h, q, latent)                                    # the weighted sum of latents
    new_up = replace(up, op=AbsorbedUp(latent, d_hv), inputs=((b, h, q, d_nope), o_lat), output=(b, h, q, latent + d_hv),
                     written=(b, h, q, latent + d_hv), stored=(sympy.expand(b * h * q * (d_nope + latent)),),
                     from_cache=(False,), cached=False)
    cache = sympy.expand(b * keys * wide * chips)                # whole on every device (see the docstring)
    new_scores = replace(scores, inputs=((b, h, q, wide), (b, 1, keys, wide)),
                         stored=(sympy.expand(b * h * q * wide), cache), from_cache=(False, True))
    read = sympy.Integer(0) if flash else sympy.expand(b * keys * latent * chips)
    new_values = replace(values, inputs=(values.inputs[0], (b, 1, keys, latent)), output=o_lat, written=o_lat,
                         stored=(values.stored[0], read), from_cache=(False, True))
    out = {up.node: new_up, scores.node: new_scores, values.node: new_values}
    out.update({ops[r].node: None for r in _DROPPED})
    return out
