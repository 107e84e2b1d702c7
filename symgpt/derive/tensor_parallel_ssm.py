"""Tensor parallelism of the Mamba-2 mixer, as Megatron-LM shards it (``MambaMixer`` in
megatron/core/ssm/mamba_mixer.py, NVIDIA/Megatron-LM at commit
d98e8a64ddf34856e74b24714e3bedb2f5a39553).

* in_proj (d -> z, x, B, C, Δ) is a ``ColumnParallelLinear``: each of the tp ranks holds
  d_inner/tp of z and of x, G/tp groups of B and of C and H/tp of Δ (``in_proj_partition_sizes``);
* the depthwise conv1d (weight and bias: d_inner/tp + 2·(G/tp)·N channels), dt_bias, A_log and D
  (H/tp each) and the gated RMSNorm's weight (d_inner/tp, normalised per group) are the rank's own
  slices (``tensor_model_parallel``, ``partition_dim`` 0): conv, scan and norm run on the rank's
  heads and groups with no communication;
* out_proj (d_inner -> d) is a ``RowParallelLinear`` (``input_is_parallel=True``): its output is
  summed over the ranks.

So the mixer is priced as an attention or MLP block is: the tensors from in_proj (inclusive) to
out_proj (exclusive) split tp ways, one all-reduce of out_proj's output in forward and one of
in_proj's input gradient in backward (an all-gather + reduce-scatter pair each under sequence
parallelism). The constructor asserts ``nheads % tp_size == 0`` and ``ngroups % tp_size == 0``:
other tp are refused. Megatron-LM has no Mamba-1 mixer (no heads, no groups; x_proj and dt_proj of
rank r_dt): tensor parallelism of a Mamba-1 layer is refused.
"""

from __future__ import annotations

from functools import lru_cache

from ..graph.arch import Arch

SOURCE = "Megatron-LM megatron/core/ssm/mamba_mixer.py (MambaMixer)"


def _walk(arch: Arch, start: str, forward: bool) -> tuple[set[str], set[str]]:
    """From op *start*, the ops of its group reached through data edges (backward: inputs; forward:
    consumers) up to the first linear on each path: (ops passed, linears reached)."""
    g, group = arch.graph, arch.graph.nodes[start]["group"]
    passed, linears, stack = set(), set(), [start]
    while stack:
        n = stack.pop()
        if n in passed or n in linears:
            continue
        a = g.nodes[n]
        if a["kind"] != "op" or a["group"] != group:
            continue
        if n != start and a["op"].kind == "linear":
            linears.add(n)
            continue
        passed.add(n)
        stack.extend(g.successors(n) if forward else a["inputs"])
    return passed, linears


@lru_cache(maxsize=256)
def _mixers(arch: Arch) -> tuple[dict[str, str], frozenset[str]]:
    roles, owners = {}, set()
    for n, a in arch.ops():
        if a["op"].kind != "ssd_scan":
            continue
        back, ins = _walk(arch, n, forward=False)
        ahead, outs = _walk(arch, n, forward=True)
        roles.update({x: "column" for x in ins})
        roles.update({x: "row" for x in outs})
        owners |= {x for x in back | ahead if arch.graph.nodes[x]["params"]}
    return roles, frozenset(owners)


def mamba2_linear_roles(arch: Arch) -> dict[str, str]:
    """Each Mamba-2 mixer's in_proj -> ``column``, its out_proj -> ``row``."""
    return _mixers(arch)[0]


def mamba2_sharded(arch: Arch, owner: str) -> bool:
    """Whether op *owner* is a Mamba-2 mixer's conv1d, scan (dt_bias, A_log, D) or gated norm:
    its parameters split tp ways by channel, head or group."""
    return owner in _mixers(arch)[1]


def _kinds(arch: Arch) -> set[str]:
    return {a["op"].kind for _, a in arch.ops()}


def tp_refusal(model, tp: int) -> str | None:
    """Why *model* cannot be split *tp* ways in its state-space layers (None: it can)."""
    if tp == 1:
        return None
    kinds = _kinds(model.arch)
    if "selective_scan" in kinds:
        return (f"tensor parallelism of the Mamba-1 mixer is not modelled: {SOURCE} shards Mamba-2 only "
                f"(heads and groups); use --tp 1 for {model.name}")
    other = _other_recurrent(model.arch)
    if other:
        return (f"tensor parallelism of {other} layers is not modelled (only Mamba-2 mixers are sharded, as "
                f"{SOURCE} does); use --tp 1 for {model.name}")
    if "ssd_scan" not in kinds:
        return None
    for sym, what, field in (("h_ssm", "Mamba-2 heads", "nheads"), ("G_ssm", "Mamba-2 groups", "ngroups")):
        n = model.sizes.get(sym)
        if n is not None and n % tp:
            return (f"tp={tp} must divide the {what} {sym}={n} ({SOURCE} asserts {field} % tp_size == 0: "
                    f"each rank holds whole {what.split()[-1]})")
    return None


def _other_recurrent(arch: Arch) -> str | None:
    """The op kind of the first recurrent op outside a Mamba-2 mixer (a gated delta rule, a short
    convolution, lightning attention, RWKV, RG-LRU, mLSTM): None when there is none."""
    from .recurrent import recurrent_ops

    mixers = _mixers(arch)[1]
    for n in recurrent_ops(arch):
        kind = arch.graph.nodes[n]["op"].kind
        if kind != "ssd_scan" and n not in mixers:
            return kind
    return None
