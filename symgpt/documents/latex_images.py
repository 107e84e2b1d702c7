"""Context of the ``images`` section, for a vision--language model whose images are priced: what
one image costs -- the decoder positions it takes (its tokens) and the FLOPs of the vision tower
and projector that turn it into them -- and the share of a prefill's FLOPs the images take at the
report's workload, then the same at the resolutions the model's processor allows.

Every number is the engine's: the ops whose FLOPs grow with ``N_img`` in ``flops.forward``
(the vision tower and the projector: a decoder's ops grow with T alone; the forward over a prompt
is what a prefill computes, and every op of it runs, a SigLIP pooling head whose output no
one reads included, as transformers runs it) and the model's
``image_tokens_within_sequence`` constraint (``N_img·t <= T``: the tokens an image takes, read as
the coefficient of ``N_img``). One image's FLOPs are those at ``B = 1``, ``N_img = 1``.

A model whose images are held (its tower counted, not run: the ``images_not_modelled`` constraint)
or that has no image input gets no section.
"""

from __future__ import annotations

import sympy

from ..core.symbols import B, N_img, P_patch, S_img, as_expr
from ..derive.quantity import evaluate
from ..render.latex import Tex, tex_expr
from ..render.latex_escape import tex_escape, tex_texttt
from ..render.latex_math import ROW_BREAK, ROW_WIDTH, tex_lines
from ..render.latex_numbers import tex_int, tex_percent, tex_sci
from .latex_sections import header

#: the image sides (pixels) the table tries for a model whose processor keeps an image's size,
#: each rounded to the nearest side the model accepts
TARGETS = (224, 336, 448, 672, 896, 1120, 1344)
#: families whose processor does not resize every image to one side: how it sizes them (transformers
#: 5.24.0's image processors), and the largest square side it hands the tower (None: the largest
#: of TARGETS; "S_img": the config's image_size, read as S_img)
VARIABLE = {
    "qwen2_5_vl": ("Qwen2.5-VL's processor (Qwen2VLImageProcessor, smart_resize) keeps an image's size, its "
                   "sides rounded to whole 28-pixel blocks (patch 14, merged 2 by 2); symgpt counts square sides "
                   "that fill whole attention windows (window_size)", None),
    "mistral3": ("Pixtral's processor (PixtralImageProcessor) keeps an image's size up to its longest side "
                 "image_size, in whole patches; the patch merger needs whole merge blocks", "S_img"),
    "lighton_ocr": ("Pixtral's processor (PixtralImageProcessor) keeps an image's size up to its longest side "
                    "image_size, in whole patches; the patch merger needs whole merge blocks", "S_img"),
    "fuyu": ("Fuyu's processor (FuyuImageProcessor) fits an image within 1080 by 1920 pixels and pads it "
             "to whole patches", 1080),
}


def _constraint(arch, cid):
    return next((c for c in arch.constraints if c.id == cid), None)


def priced(arch) -> bool:
    """Whether *arch* reads images whose cost is modelled: N_img in an input's shape, a count of
    tokens per image, and no ``images_not_modelled`` refusal."""
    ins = [a for _, a in arch.graph.nodes(data=True) if a.get("kind") == "input"]
    if not any(as_expr(x).has(N_img) for a in ins for x in a.get("shape", ())):
        return False
    if _constraint(arch, "image_tokens_within_sequence") is None:
        return False
    held = _constraint(arch, "images_not_modelled")
    return held is None or not held.expr.has(N_img)


def applies(model) -> bool:
    """Whether the section belongs in *model*'s report: a model whose images are priced."""
    return priced(model.arch)


def tokens_per_image(arch) -> sympy.Expr:
    """The decoder positions one image takes: the coefficient of N_img in ``N_img·t - T <= 0``."""
    c = _constraint(arch, "image_tokens_within_sequence")
    return sympy.simplify(sympy.diff(c.expr, N_img))


def vision_part(q) -> sympy.Expr:
    """The entries of quantity *q* that grow with N_img (the vision tower and the projector)."""
    return sympy.Add(*[as_expr(e) for _, e in q.breakdown if as_expr(e).has(N_img)])


def one_image(expr) -> sympy.Expr:
    """*expr* for one image in one sequence (B = 1, N_img = 1), expanded."""
    return sympy.expand(as_expr(expr).xreplace({B: sympy.Integer(1), N_img: sympy.Integer(1)}))


def sides(model) -> list[int]:
    """The image sides of the resolution table: the model's own S_img where its processor resizes
    every image to it; else each of TARGETS rounded to the nearest side the model's constraints
    accept (and the model's own S_img), up to the processor's largest (``VARIABLE``)."""
    own = model.bindings.get(S_img)
    if model.family.name not in VARIABLE:
        return [int(own)] if own is not None else []
    if P_patch not in model.bindings:
        return []   # no side can be checked against the model's constraints
    _, cap = VARIABLE[model.family.name]
    cap = int(own) if cap == "S_img" and own is not None else (cap if isinstance(cap, int) else max(TARGETS))
    step = int(model.bindings.get(P_patch, 1))   # a side holds whole patches
    ok = [s for s in range(step, cap + 1, step) if _accepts(model, s)]
    if not ok:
        return []
    picked = {min(ok, key=lambda s: (abs(s - t), s)) for t in TARGETS}
    if own is not None and int(own) in ok:
        picked.add(int(own))
    return sorted(picked)


def _accepts(model, side) -> bool:
    """Whether every constraint on S_img that can be decided holds for one image of *side* pixels."""
    b = {**model.bindings, S_img: sympy.Integer(side), N_img: sympy.Integer(1), B: sympy.Integer(1)}
    for c in model.arch.constraints:
        if not c.expr.has(S_img):
            continue
        v = evaluate(c.expr, b)
        if v is None:
            continue
        if (c.kind == "integer" and not (v.is_Integer and v > 0)) or (c.kind == "le" and v > 0):
            return False
    return True


def images(model, notation, **options) -> dict:
    """The section's context (a model whose images are not priced gets one sentence)."""
    ctx = {**header(model, notation), "skip": None}
    arch = model.arch
    if not priced(arch):
        ctx["skip"] = Tex(f"{tex_texttt(model.name)} prices no image: it has no image input, or its vision tower "
                          "is counted in the parameters but not run (see the notes of its answers).")
        return ctx
    b = dict(model.bindings)
    fwd = model.quantity("flops.forward")   # the forward over the prompts: what a prefill computes
    vision = vision_part(fwd)
    t, per = tokens_per_image(arch), one_image(vision)
    t_v, per_v = evaluate(t, b), evaluate(per, b)
    n_bound = b.get(N_img)
    n_w = n_bound if n_bound else sympy.Integer(1)   # a text-only workload: one image a sequence
    work = {**b, N_img: n_w}
    total_w, vision_w = evaluate(as_expr(fwd.expr), work), evaluate(vision, work)
    ctx.update({
        "S": Tex(notation.symbol("S_img")), "N": Tex(notation.symbol("N_img")), "T": Tex(notation.symbol("T")),
        "Bsym": Tex(notation.symbol("B")),
        "t_formula": tex_expr(t, notation), "t_value": Tex(tex_int(t_v)) if t_v is not None else None,
        "flops_formula": Tex(ROW_BREAK.join(tex_lines(per, notation, 3, width=ROW_WIDTH))),
        "flops_value": Tex(tex_int(per_v)) if per_v is not None else None,
        "flops_sci": Tex(tex_sci(per_v)) if per_v is not None else None,
        "side": Tex(tex_int(b[S_img])) if S_img in b else None,
        "assumed": not n_bound, "n_w": Tex(tex_int(n_w)),
        "B_w": Tex(tex_int(b[B])) if B in b else None,
        "T_w": Tex(tex_int(b[arch_T(model)])) if arch_T(model) in b else None,
        "share": Tex(tex_percent(vision_w, total_w)) if None not in (vision_w, total_w) and total_w else None,
        "prefill_sci": Tex(tex_sci(total_w)) if total_w is not None else None,
        "vision_sci": Tex(tex_sci(vision_w)) if vision_w is not None else None,
        "tower": any(arch.stack_of(p) for p, e in fwd.breakdown if as_expr(e).has(N_img) and p in arch.graph),
        "variable": Tex(tex_escape(VARIABLE[model.family.name][0])) if model.family.name in VARIABLE else None,
        "rows": _rows(model, t, per, vision, work),
    })
    return ctx


def arch_T(model) -> sympy.Symbol:
    """The decoder's sequence length (T)."""
    from ..derive.step import generated

    return generated(model.arch)


def _rows(model, t, per, vision, work) -> list[dict]:
    """One row per image side: tokens, one image's FLOPs and the images' share of the prefill at the
    workload (its other ops unchanged: a decoder's FLOPs depend on T, not on the images' side)."""
    prefill_rest = evaluate(as_expr(model.quantity("flops.forward").expr) - vision, work)
    rows = []
    for s in sides(model):
        at = {**work, S_img: sympy.Integer(s)}
        tv, fv, vw = evaluate(t, at), evaluate(per, at), evaluate(vision, at)
        if None in (tv, fv, vw, prefill_rest):
            continue
        rows.append({"side": s, "tokens": tv, "flops": fv, "share_of": (vw, vw + prefill_rest),
                     "cells": [Tex(f"${tex_int(s)} \\times {tex_int(s)}$"), Tex(f"${tex_int(tv)}$"),
                               Tex(f"${tex_sci(fv)}$"), Tex(f"${tex_percent(vw, vw + prefill_rest)}$")]})
    return rows
