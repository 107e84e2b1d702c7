"""Context for the fine-tuning section: full fine-tuning, LoRA and QLoRA of the same model at the
report's workload, their trainable and frozen parameters and their training memory per component.

The three come from the derivations of the rewritten graph (``derive.finetune.apply``): the frozen
base at its storage bytes, the adapters, the gradients and optimizer states of the trainable
parameters only and the activations the adapted graph saves. The conventions are the QLoRA
paper's (Dettmers et al. 2023: rank 64 on every linear layer of the blocks, a 4-bit NF4 base with
double-quantized scales) under the precision policy and optimizer of the memory section.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from ..derive.quantity import evaluate
from ..graph import roles as R
from ..render.latex import Tex, tex_expr
from ..render.latex_math import tex_lines
from ..render.latex_escape import tex_escape
from ..render.latex_numbers import tex_bytes, tex_int
from .latex_costs import MEMORY_POLICY
from .latex_sections import header

#: Dettmers et al. 2023 (QLoRA), Sec. 4 and Appendix B: r = 64 on every linear layer of the blocks
RANK = 64
#: the targets where a mixture's experts cannot be adapted
ATTENTION = ("q", "k", "v", "o")
#: the memory components, in the order of the table and of each bar, with their colours
COMPONENTS = (("frozen", "Frozen base weights (storage bytes)", "gray!45", "frozen base"),
              ("trained", "Trained weights", "blue!45", "trained weights"),
              ("gradients", "Gradients", "orange!60", "gradients"),
              ("optimizer", "Optimizer state", "red!45", "optimizer state"),
              ("activations", "Activations (every saved tensor)", "green!45", "activations"))
#: the bars' width in the picture's x units (one unit: 0.0096 of the line width)
_WIDTH = 100


def finetune(model, notation, **policy) -> dict:
    """Full fine-tuning, LoRA and QLoRA of *model*: parameters, memory per component and the
    stacked bars (``refused``: the one sentence why where LoRA cannot be applied)."""
    from ..derive.finetune import ALL_LINEAR, FineTune, apply

    opts = {**MEMORY_POLICY, **policy}
    ctx = {**header(model, notation), "policy": opts["precision"], "optimizer": opts["optimizer"],
           "rank": RANK, "refused": None}
    methods = [("Full", model)]
    targets, ctx["targets"] = ALL_LINEAR, Tex("every linear layer of the blocks")
    try:
        apply(model, FineTune("lora", RANK, targets))
    except SymgptError as e:
        # a mixture's experts: the attention projections alone, where the model has all four
        reason = str(e).split("; target the attention projections")[0].rstrip(".")
        try:
            targets = ATTENTION
            apply(model, FineTune("lora", RANK, targets))
        except SymgptError as e2:
            ctx["refused"] = Tex(tex_escape(f"{reason}; nor on the attention projections q, k, v, o alone "
                                            f"({str(e2).rstrip('.')})"))
            return ctx
        ctx["targets"] = Tex("the attention projections $W_Q$, $W_K$, $W_V$, $W_O$ of every block (not the "
                             "experts, which transformers holds as fused 3-D parameters, not linear layers "
                             "peft adapts)")
    ctx["experts"] = any(g.role == R.EXPERTS for g in model.arch.groups.values())
    methods += [(label, apply(model, FineTune(method, RANK, targets)))
                for label, method in (("LoRA", "lora"), ("QLoRA", "qlora"))]
    cols = [_column(label, m, opts) for label, m in methods]
    ctx["columns"] = cols
    ctx["known"] = all(c["total"] is not None for c in cols)
    ctx["rows"] = [{"label": Tex(tex_escape(text)),
                    "cells": [Tex(f"${tex_bytes(c['parts'][key])}$") if c['parts'][key] is not None else Tex("--")
                              for c in cols]} for key, text, _, _ in COMPONENTS]
    ctx["params"] = [{"label": Tex(text), "cells": [_int(c[key]) for c in cols]}
                     for key, text in (("trainable", "Trainable parameters"), ("frozen_params", "Frozen parameters"))]
    ctx["totals"] = [Tex(f"$\\mathbf{{{tex_bytes(c['total'])}}}$") if c["total"] is not None else Tex("--")
                     for c in cols]
    lora, qlora = cols[1], cols[2]
    ctx["trainable_formula"] = tex_expr(lora["trainable_expr"], notation)
    ctx["trainable_value"] = _int(lora["trainable"], math=False)
    ctx["frozen_lines"] = tex_lines(qlora["frozen_expr"], notation, 4)
    ctx["frozen_bytes"] = _int(qlora["parts"]["frozen"], math=False)
    ctx["frozen_size"] = Tex(tex_bytes(qlora["parts"]["frozen"])) if qlora["parts"]["frozen"] is not None else None
    ctx["bars"] = _bars(cols) if ctx["known"] else []
    ctx["categories"] = [{"label": Tex(tex_escape(short)), "colour": Tex(colour)} for _, _, colour, short in COMPONENTS]
    return ctx


def _int(v, math: bool = True) -> Tex | None:
    if v is None:
        return Tex("--") if math else None
    return Tex(f"${tex_int(v)}$" if math else tex_int(v))


def _column(label: str, m, opts) -> dict:
    b = m.bindings
    weights = m.quantity("memory.weights", **opts)
    frozen = sum((e for p, e in weights.breakdown if "/lora_" not in p), 0) if "finetune" in m.arch.flags else 0
    trained = weights.expr - frozen
    exprs = {"frozen": frozen, "trained": trained,
             **{k: m.quantity(f"memory.{k}", **opts).expr for k in ("gradients", "optimizer", "activations")}}
    parts = {k: evaluate(e, b) if e != 0 else 0 for k, e in exprs.items()}
    total = m.quantity("memory.total", **opts)
    known = all(v is not None for v in parts.values())
    if known and total.value is not None:
        assert sum(parts.values()) == total.value, (label, parts, total.value)
    trainable = m.quantity("params.trainable")
    frozen_params = m.quantity("params.frozen")
    return {"label": label, "parts": parts, "total": total.value if known else None,
            "trainable": trainable.value, "trainable_expr": trainable.expr,
            "frozen_params": frozen_params.value, "frozen_expr": exprs["frozen"]}


def _bars(cols) -> list[dict]:
    """One bar per method, its segments in proportion to the largest total."""
    top = max(c["total"] for c in cols)
    bars = []
    for i, c in enumerate(cols):
        left, segs = 0, []
        for key, _, colour, _ in COMPONENTS:
            v = c["parts"][key]
            if not v:
                continue
            w = v * _WIDTH / top
            segs.append({"left": Tex(_fmt(left)), "right": Tex(_fmt(left + w)), "colour": Tex(colour)})
            left += w
        bars.append({"title": Tex(c["label"]), "yshift": Tex(_fmt(-0.95 * i)), "segments": segs,
                     "end": Tex(_fmt(left)), "size": Tex(tex_bytes(c["total"]))})
    return bars


def _fmt(v) -> str:
    return f"{float(v):.4g}"
