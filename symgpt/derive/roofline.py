"""The roofline of an inference step, op by op: each op's FLOPs, bytes, arithmetic intensity and
what bounds it on a device, and the points of a roofline figure (decode and prefill).

Used by ``symgpt infer`` (its op table and ``--figure``) and ``symgpt graph --color-by bound``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from ..core.symbols import BW_mem, F_peak
from .inference import priced_ops
from .inference_setup import setup
from .step import PHASES, step

@dataclass(frozen=True)
class RooflinePoint:
    node: str
    flops: sympy.Expr          # of the step, all copies, per device
    bytes: sympy.Expr
    flops_value: object        # at the bindings (None while unbound)
    bytes_value: object
    intensity: object          # FLOPs per byte at the bindings (None while unbound)
    bound: str | None          # "memory" or "compute" at the bindings (None while unbound)


def roofline_points(model, phase, **options) -> list[RooflinePoint]:
    """Each op of a step with its FLOPs, bytes, intensity and what bounds it on the device
    (memory when bytes / BW_mem exceed FLOPs / F_peak)."""
    from .quantity import evaluate

    s = setup(model, **options)
    arch = model.arch
    st = step(arch, phase)
    out = []
    for o, f, b in priced_ops(s, arch, st):
        fv, bv = evaluate(f, s.bindings), evaluate(b, s.bindings)
        peak, bw = s.bindings.get(F_peak), s.bindings.get(BW_mem)
        inten = fv / bv if fv is not None and bv else None
        bound = None
        if fv is not None and bv is not None and peak is not None and bw is not None:
            bound = "memory" if bv / bw >= fv / peak else "compute"
        out.append(RooflinePoint(o.node, f, b, fv, bv, inten, bound))
    return out


@dataclass(frozen=True)
class Roofline:
    """What a roofline figure shows: the device's roof and each op of a decode step and of a
    prefill as a point (intensity, attainable FLOP/s = FLOPs / max(FLOPs / peak, bytes / BW))."""

    device: str
    peak: sympy.Expr
    bandwidth: sympy.Expr
    ridge: sympy.Expr                              # peak / bandwidth: FLOPs per byte
    points: tuple[tuple[str, str, object, object, str], ...]   # (phase, node, intensity, FLOP/s, bound)


def roofline(model, **options) -> Roofline:
    s = setup(model, **options)
    peak, bw = s.bindings.get(F_peak), s.bindings.get(BW_mem)
    if peak is None or bw is None:
        raise SymgptError("a roofline needs a device: --hardware NAME, or --peak and --bandwidth")
    pts = []
    for phase in ("decode", "prefill"):
        for p in roofline_points(model, phase, **options):
            if p.flops_value is None or p.bytes_value is None:
                raise SymgptError("a roofline needs every size bound (--set B=... --set T=...)")
            if p.flops_value == 0 or p.bytes_value == 0:
                continue  # no FLOPs: no point on log axes
            attained = p.flops_value / max(p.flops_value / peak, p.bytes_value / bw)
            pts.append((phase, p.node, p.intensity, attained, p.bound))
    name = s.device.title if s.device is not None else "the given device"
    return Roofline(name, peak, bw, peak / bw, tuple(pts))


@dataclass(frozen=True)
class StepView:
    """What a diagram of an inference step draws (``symgpt.documents.diagrams.diagram(step=...)``)."""

    phase: str
    shapes: tuple                   # (node, shape at the step)
    flops: object                   # the step's FLOPs quantity
    bounds: dict | None             # node -> RooflinePoint (for colouring by bound), or None


def step_view(model, phase: str = "decode", bound: bool = False, **options) -> StepView:
    """The shapes, FLOPs and (with *bound*) the roofline of each op of an inference step."""
    if phase not in PHASES:
        raise SymgptError(f"unknown phase {phase!r}; phases: {', '.join(PHASES)}")
    flops = model.quantity(f"inference.{phase}.flops", **options)
    bounds = {p.node: p for p in roofline_points(model, phase, **options)} if bound else None
    return StepView(phase, step(model.arch, phase).shapes, flops, bounds)
