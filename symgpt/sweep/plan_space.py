"""The strategies ``symgpt plan`` prices: every (tp, pp, dp, cp, ep, micro-batch size B,
micro-batch count m, vp) that divides the model and the cluster, enumerated with NumPy (one
column per degree), and the ``Chunk``-like view of a subset of them that ``Compiled`` reads.

A strategy divides when tp·pp·dp·cp = N, tp | h (and h_kv), pp·vp | every stack's layers,
cp | T and cp <= max_cp, dp | the global batch G, ep | dp (ep > 1 only with experts, ep | each
expert count), B | G/dp with m = G/(dp·B), and (vp > 1) pp > 1 and pp | m.
"""

from __future__ import annotations

import numpy as np

from .grid import Axis

COLUMNS = ("tp", "pp", "dp", "cp", "ep", "B", "microbatches", "vp")


def divisors(n: int) -> list[int]:
    small = [i for i in range(1, int(n ** 0.5) + 1) if n % i == 0]
    return sorted(set(small + [n // i for i in small]))


def _cross(cols: dict[str, np.ndarray], name: str, values) -> dict[str, np.ndarray]:
    """Every row of *cols* with every value of *values* (the new column varies fastest)."""
    values = np.asarray(values, dtype=np.int64)
    k = len(next(iter(cols.values())))
    out = {n: np.repeat(c, len(values)) for n, c in cols.items()}
    out[name] = np.tile(values, k)
    return out


def _keep(cols: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {n: c[mask] for n, c in cols.items()}


def strategies(model, devices: int, batch: int, microbatch_sizes, vps, max_cp: int) -> dict[str, np.ndarray]:
    """The dividing strategies as int64 columns (``COLUMNS``), in the order of nested loops over
    tp, pp, cp, ep, B, vp."""
    from ..graph import roles
    from ..derive.checks import positive_int
    from ..derive.tensor_parallel_ssm import tp_refusal

    for name, values in (("devices", (devices,)), ("global batch", (batch,)), ("micro-batch size", microbatch_sizes),
                         ("vp", vps), ("max cp", (max_cp,))):
        for v in values:
            positive_int(name, v)
    sizes = model.sizes
    h, h_kv, T = sizes.get("h"), sizes.get("h_kv"), int(sizes["T"])
    layers = [g.repeat.xreplace(model.bindings) for g in model.arch.stacks()]
    experts = [g.repeat.xreplace(model.bindings) for g in model.arch.groups_with(roles.EXPERTS)]
    outer = {n: [] for n in ("tp", "pp", "cp", "dp", "ep")}
    if all(n.is_Integer for n in layers):
        for tp in divisors(devices):
            if (h is not None and h % tp) or (h_kv is not None and h_kv % tp):
                continue
            if tp_refusal(model, tp):  # state-space layers (derive.tensor_parallel_ssm)
                continue
            for pp in divisors(devices // tp):
                for cp in divisors(devices // (tp * pp)):
                    dp = devices // (tp * pp * cp)
                    if cp > max_cp or T % cp or batch % dp:
                        continue
                    for ep in divisors(dp):
                        if ep > 1 and (not experts or any(not e.is_Integer or e % ep for e in experts)):
                            continue
                        for n, v in zip(outer, (tp, pp, cp, dp, ep)):
                            outer[n].append(v)
    cols = {n: np.asarray(v, dtype=np.int64) for n, v in outer.items()}
    sizes_b = list(dict.fromkeys(int(b) for b in microbatch_sizes))
    cols = _cross(cols, "B", sizes_b)
    cols = _keep(cols, (batch // cols["dp"]) % cols["B"] == 0)
    cols["microbatches"] = batch // (cols["dp"] * cols["B"])
    cols = _cross(cols, "vp", list(dict.fromkeys(int(v) for v in vps)))
    pp, vp, m = cols["pp"], cols["vp"], cols["microbatches"]
    ok = (vp == 1) | ((pp > 1) & (m % pp == 0))
    for n in layers:
        ok &= int(n) % (pp * vp) == 0
    cols = _keep(cols, ok)
    return {n: cols[n] for n in COLUMNS}


class Points:
    """Chosen strategies as a ``Chunk``-like set of points (``Compiled`` reads ``n``, ``index``
    and ``values``): the strategies at *positions* of *cols*, over *axes*."""

    def __init__(self, axes: list[Axis], cols: dict[str, np.ndarray], positions: np.ndarray | None = None):
        self._axes = axes
        self.index = tuple(np.searchsorted(np.asarray(a.values, dtype=np.int64),
                                           cols[a.name] if positions is None else cols[a.name][positions])
                           for a in axes)
        self.n = len(self.index[0])

    def values(self, i: int, exact: bool = False) -> np.ndarray:
        return self._axes[i].take(self.index[i], exact)


def axes_of(cols: dict[str, np.ndarray]) -> list[Axis]:
    """One value axis per column: the distinct values it takes."""
    return [Axis(n, values=tuple(int(v) for v in np.unique(cols[n]))) for n in COLUMNS]
