"""Context for the self-test answers ((a)-(e)): each answer is a query
or a quantity of symgpt, printed; the questions' own sizes are data here, as the questions state them."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..render.latex import Tex, tex_expr
from ..render.latex_escape import tex_texttt
from ..render.latex_numbers import tex_bytes, tex_fixed, tex_int, tex_percent, tex_sci, tex_short
from .latex_sections import by_count, header

#: the models and workloads the textbook questions name
QUESTION_FAMILY = "gpt2"                                                # the block of (b), (e)
QUESTION_B = {"L": 32, "d": 4096, "V": 50000, "T_max": 2048}          # (b)
QUESTION_C = (("gpt2-small", 8, 1024), ("gpt3-175b", 1024, 2048))     # (c): model, B, T
QUESTION_C_PEAK = 300 * 10**12                                         # "~300 TFLOPs/s"
QUESTION_E = ("gpt2-small", "gpt3-175b")                               # (e)




def _explain(kind, notation):
    """Why a saved tensor is large, by the kind of op that saves it (None: no comment)."""
    if kind != "softmax":
        return None
    t, h = notation.symbol("T"), notation.symbol("h")
    return Tex(f"the attention probabilities, one ${t} \\times {t}$ matrix per head, per sequence "
               f"and per layer, which is why they grow as ${h} {t}^2$")


def _gpt2_rule(q) -> bool:
    """Whether the parameter count *q* has GPT-2's leading-order rule (12Ld^2 + Vd), whatever its
    family is called."""
    import sympy

    from ..core.symbols import L, V, d
    from .latex_costs import family_rule

    own, _ = family_rule(q)
    return own is None or sympy.expand(own.rule - (12 * L * d**2 + V * d)) == 0


def _t(s) -> Tex:
    return Tex(s)


def selftest(model, notation) -> dict:
    from ..graph import roles as R
    from ..model.model import load
    from ..query import by_role, dominance, rank_terms, ranking, rule
    from .latex_costs import MEMORY_POLICY
    from ..render.latex_names import tensor_name

    # (a) the count from the per-block table, and its largest term / tensor
    q = model.params
    top_term = rank_terms(q)[0] if q.value is not None else None
    term_tex = tex_expr(top_term.expr, notation) if top_term else None
    term_value = top_term.value if top_term else None
    if top_term is not None and len(model.arch.stacks()) > 1:  # grouped as the model is built
        term_tex, term_value = _largest_grouped_term(model, q, notation)
    top_part = ranking(q)[0] if q.value is not None else None
    sym, desc = tensor_name(top_part.path, "weight", "", model.arch) if top_part else (None, None)
    a = {"value": _t(tex_int(q.value)) if q.value is not None else None,
         "term": term_tex,
         "term_value": _t(tex_int(term_value)) if top_term else None,
         "term_share": _t(tex_percent(term_value, q.value)) if top_term else None,
         "part": desc or (top_part.path if top_part else None),
         "part_symbol": _t(sym) if sym else None,
         "part_value": _t(tex_int(top_part.value)) if top_part else None,
         "part_share": _t(tex_percent(top_part.value, q.value)) if top_part else None}

    # (b) a larger model: the rule Vd + 12Ld^2 against the exact count
    mb = load(QUESTION_FAMILY, **QUESTION_B)
    rb = rule(mb.params, ["d", "V"])
    b = {"sizes": [(_t(notation.symbol(k)), _t(tex_int(v))) for k, v in QUESTION_B.items()],
         "rule": tex_expr(rb.rule, notation), "rule_value": _t(tex_int(rb.rule_value)),
         "exact": _t(tex_int(mb.params.value)), "exact_short": _t(tex_short(mb.params.value)),
         "error": _t(tex_percent(rb.relative_error, 1)),
         # the question is GPT-2's: said so where the report's model has another leading-order rule
         "family": "" if _gpt2_rule(q) else "GPT-2"}

    # (c) wall-clock per step at the A100 peak
    c = []
    for name, bsz, seq in QUESTION_C:
        m = load(name, B=bsz, T=seq)
        fl = m.quantity("flops.train")
        st = m.quantity("time.step", peak=QUESTION_C_PEAK)
        c.append({"model": name, "B": _t(tex_int(bsz)), "T": _t(tex_int(seq)),
                  "flops": _t(tex_sci(fl.value, 3)), "seconds": _t(_seconds(st.value))})

    # (d) the largest activation and the term that dominates as T grows
    act = model.quantity("memory.activations", **MEMORY_POLICY)
    d = None
    if act.value is not None:
        top = ranking(act)[0]
        try:
            dominant = by_count(dominance(act, "T").dominant, model, notation)  # a mixed stack's count kept
        except SymgptError:  # not a rational function of T (a sliding window)
            dominant = None
        from ..query.selection import entry_stack
        from .latex_costs import grouped

        stack = entry_stack(model.arch, top.path)
        repeat = model.arch.groups[stack].repeat if stack is not None and len(model.arch.stacks()) > 1 else None
        d = {"path": _t(tex_texttt(top.path)), "formula": grouped(top.expr, repeat, notation),
             "size": _t(tex_bytes(top.value)), "share": _t(tex_percent(top.value, act.value)),
             "dominant": dominant, "policy": MEMORY_POLICY["precision"],
             "explain": _explain(model.arch.graph.nodes[top.path]["op"].kind, notation)
             if top.path in model.arch.graph else None}

    # (e) the token embedding's share, small model vs large, and its limit as d grows
    e = []
    for name in QUESTION_E:
        m = load(name)
        emb = by_role(m.params, m, [R.TOKEN_EMBEDDING])
        e.append({"model": name, "value": _t(tex_short(emb.value)), "total": _t(tex_short(m.params.value)),
                  "share": _t(tex_percent(emb.value, m.params.value))})
    mf = load(QUESTION_FAMILY)
    limit = dominance(mf.params, "d").share(mf.arch.first(R.TOKEN_EMBEDDING))
    return {**header(model, notation), "a": a, "b": b, "c": c, "peak": _t(tex_sci(QUESTION_C_PEAK, 3)),
            "d": d, "e": e, "e_limit": tex_expr(limit, notation),
            "d_sym": _t(notation.symbol("d")), "t_sym": _t(notation.symbol("T")), "b_sym": _t(notation.symbol("B")), "theta": _t(notation.quantity("params"))}


def _largest_grouped_term(model, q, notation):
    """The largest term of the parameter count written as the model is built -- each stack's count
    times one term of its per-layer polynomial, ``(L - 3) \\cdot 3 E d d_ff``, or a term outside
    the stacks -- as (LaTeX, value). Expanded, a mixed stack's count splits into terms larger than
    the whole (``3 E L d d_ff`` over 100 %) and negative ones."""
    import sympy

    from ..derive.quantity import evaluate
    from ..query import by_role
    from ..query.selection import entry_stack
    from .latex_sections import per_copy, times_factor

    candidates = []
    for g in model.arch.stacks():
        per = per_copy(by_role(q, model, [g.name]).expr, g.repeat)
        for t in sympy.Add.make_args(per):
            tex = (f"{times_factor(g.repeat, notation)} \\cdot {tex_expr(t, notation)}"
                   if g.repeat != 1 else str(tex_expr(t, notation)))
            candidates.append((evaluate(g.repeat * t, model.bindings), tex))
    rest = sympy.expand(sum((e for p, e in q.breakdown if entry_stack(model.arch, p) is None), sympy.Integer(0)))
    for t in (sympy.Add.make_args(rest) if rest != 0 else ()):
        candidates.append((evaluate(t, model.bindings), str(tex_expr(t, notation))))
    value, tex = max(candidates, key=lambda c: c[0])
    return Tex(tex), value


def _seconds(v) -> str:
    if v is None:
        return "--"
    if v < 1:
        return rf"{tex_fixed(v * 1000, 3)}\,\mathrm{{ms}}"
    return rf"{tex_fixed(v, 3)}\,\mathrm{{s}}"

