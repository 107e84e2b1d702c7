"""Context of the ``serving`` section: serving on one named hardware profile as vLLM runs it --
the concurrent sequences a paged KV cache holds against the context length T (its closed form,
``derive.serving``), decode throughput against the batch (``serving_spec.StepTimer``) and
speculative decoding's speed-up against the acceptance rate (Leviathan et al. 2023) with a named
draft. Every number is exact from the engine; figure coordinates are rounded from exact values
here. The template only places what this gives."""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from ..core.symbols import as_expr
from ..render.latex import Tex
from ..render.latex_escape import tex_escape, tex_texttt
from ..render.latex_numbers import tex_fixed, tex_int

#: the profile the section is priced on: the cluster section's (``documents.cluster.HARDWARE``)
from .cluster import HARDWARE

#: tensor-parallel sizes tried, smallest first, until one sequence of the report's T fits
CHIPS = (1, 2, 4, 8)
#: the draft tokens per verification drawn, and the acceptance rates (exact tenths)
GAMMAS = (2, 4, 8)
ALPHAS = tuple(sympy.Rational(i, 10) for i in range(10))
#: the batch of the speculative-decoding figure
SPEC_BATCH = 1
#: the serving options of every number here: 16-bit weights and cache, flash attention
OPTIONS = {"weight_bits": 16, "attention": "flash"}


def _num(v, digits: int = 6) -> str:
    """A coordinate for pgfplots: *v* rounded to *digits* significant digits (from the exact value)."""
    v = sympy.Rational(v)
    if v == 0:
        return "0"
    return format(float(sympy.Float(v, digits + 4)), f".{digits}g")


def _ticks(xs) -> tuple[Tex, Tex]:
    """pgfplots ticks at *xs* (a last value that is not a power of two, crowding the one before it,
    is left off)."""
    xs = list(xs)
    if len(xs) > 1 and xs[-1] & (xs[-1] - 1) and xs[-1] < xs[-2] * 4:
        xs = xs[:-1]

    def label(x):
        return f"$2^{{{x.bit_length() - 1}}}$" if x >= 10_000 and x & (x - 1) == 0 else f"${tex_int(x)}$"

    return Tex(",".join(str(x) for x in xs)), Tex(",".join("{" + label(x) + "}" for x in xs))


def _skip(model, reason: str) -> dict:
    return {"model": model.name, "skip": reason}


def _left_out(model):
    """The sentence saying why the section is left out of *model*'s document, or None."""
    from ..derive.recurrent import recurrent_ops

    arch = model.arch
    if recurrent_ops(arch):
        return ("it has recurrent layers, whose state between decode steps has a fixed size, not a KV cache "
                "that grows with the context, so there are no paged blocks to count "
                "(\\texttt{symgpt serve} refuses it).")
    names = {x.name for g in arch.stacks() if g.length is not None for x in g.length.free_symbols}
    if "T_enc" in names:
        return ("it is an encoder--decoder, whose cross-attention cache is the encoder's output, not a cache "
                "that grows one token at a time, and vLLM's paged-capacity model is for decoder-only models "
                "(\\texttt{symgpt serve} refuses it).")
    from ..derive.kvcache import cache_tensors

    if not cache_tensors(arch):
        return ("it is a bidirectional encoder: it caches nothing between tokens, so there is no KV cache "
                "to page (\\texttt{symgpt serve} refuses it).")
    return None


def _generated(model):
    from ..derive.step import generated

    return generated(model.arch)


def _fit(model, T, t):
    """(options, max_sequences Quantity at T = t) on the fewest devices of CHIPS where one sequence
    of *t* tokens fits; (None, reason) if none does."""
    from ..core.hardware import hardware
    from ..derive import serving
    from ..derive.inference import weights

    last = None
    # each device holds at least 1/n of the weights (a tensor is split n ways or held whole): a
    # count of devices whose share alone exceeds the memory the engine may use is not tried
    whole = weights(model, hardware=HARDWARE, **OPTIONS).value
    room = serving.UTILIZATION * hardware(HARDWARE).memory
    for n in CHIPS:
        opts = {"hardware": HARDWARE, **OPTIONS, **({"chips": n} if n > 1 else {})}
        if whole is not None and whole / n > room:
            last = (f"on {n} device{'s' if n > 1 else ''} the weights and the workspace alone exceed the "
                    f"{serving.UTILIZATION} of the memory the engine may use")
            continue
        try:
            q = serving.max_sequences(model, **opts)
        except SymgptError as e:
            if "do not fit" in str(e):
                last = (f"on {n} device{'s' if n > 1 else ''} the weights and the workspace alone exceed the "
                        f"{serving.UTILIZATION} of the memory the engine may use")
            elif last is None:
                last = str(e)
            continue
        v = q.expr.xreplace({T: t}).xreplace(dict(q.bindings))
        if v.is_Integer and v >= 1:
            return opts, v
        last = f"no sequence of {t} tokens fits"
    return None, last


def _bytes(e, bindings) -> sympy.Integer:
    v = as_expr(e).xreplace(bindings)
    if not v.is_Integer:
        raise SymgptError(f"a serving size is not a whole number of bytes: {v}")
    return v


def _capacity(model, opts, T, t):
    """The closed form of the concurrent sequences in T and its values at powers of two."""
    from ..derive import serving

    p = serving.paged(model, serving.BLOCK, **opts)
    bind = {k: v for k, v in dict(p.setup.bindings).items() if k != T}
    parts = serving.budget_parts(model, serving.UTILIZATION, serving.WORKSPACE_TOKENS, **opts)
    memory, weights, workspace = (_bytes(e, bind) for _, e in parts)
    memory_raw = memory / serving.UTILIZATION
    budget = memory + weights + workspace
    block = p.block
    # bytes of one block, summed over the layers, per window (None: full attention)
    per_window: dict = {}
    terms: dict = {}
    for c in p.layers:
        copies, per = _bytes(c.copies, bind), _bytes(c.per_token, bind)
        w = None if c.window is None else _bytes(c.window, bind)
        per_window[w] = per_window.get(w, 0) + block * copies * per
        terms.setdefault(w, []).append((copies, per))
    full = sympy.ceiling(T / block)

    def blocks(w):
        return full if w is None else sympy.Min(full, sympy.ceiling(sympy.Rational(w, block)) + 1)

    per_seq = sympy.Add(*[b * blocks(w) for w, b in per_window.items()])
    closed = sympy.floor(budget / per_seq)
    # the closed form as typeset: budget over the sum of block bytes times blocks held
    ceil_tex = rf"\left\lceil T / {block} \right\rceil"
    den = []
    for w, b in sorted(per_window.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
        held = ceil_tex if w is None else (rf"\min\left({ceil_tex},\ {tex_int(sympy.ceiling(sympy.Rational(w, block)) + 1)}\right)")
        den.append(f"{tex_int(b)} {held}")
    formula = rf"\left\lfloor \frac{{{tex_int(budget)}}}{{{' + '.join(den)}}} \right\rfloor"
    blocks_lines = []
    for w, b in per_window.items():
        inner = " + ".join(f"{tex_int(c)} \\cdot {tex_int(q)}" for c, q in terms[w])
        blocks_lines.append({"window": Tex(tex_int(w)) if w is not None else None,
                             "eq": Tex(rf"{block} \left({inner}\right) = {tex_int(b)}")})
    xs, x = [], block
    while x < t:
        xs.append(x)
        x *= 2
    xs.append(t)
    points = [(x, closed.xreplace({T: x})) for x in xs]
    for _, n in points:
        if not n.is_Integer:
            raise SymgptError(f"the serving capacity is not a number: {n}")
    at_t = per_seq.xreplace({T: t})
    return {"p": p, "closed": closed, "formula": Tex(formula), "points": points, "per_seq_t": at_t,
            "budget_eq": Tex(rf"\frac{{{serving.UTILIZATION.p}}}{{{serving.UTILIZATION.q}}} \cdot {tex_int(memory_raw)}"
                             rf" - {tex_int(-weights)} - {tex_int(-workspace)} = {tex_int(budget)}"),
            "budget": budget, "blocks_lines": blocks_lines,
            "windowed": any(w is not None for w in per_window),
            "per_seq_eq": Tex(" + ".join(f"{tex_int(b)} \\cdot {tex_int(blocks(w).xreplace({T: t}))}"
                                         for w, b in per_window.items()) + f" = {tex_int(at_t)}"),
            "block": block, "workspace_tokens": Tex(tex_int(serving.WORKSPACE_TOKENS))}


def _throughput(model, opts, t, capacity):
    """Decode tokens per second against the batch at a cache of *t* positions."""
    from ..derive.serving_spec import StepTimer

    timer = StepTimer(model, **opts)
    batches, b = [], 1
    while b < capacity:
        batches.append(b)
        b *= 2
    batches.append(int(capacity))
    rows = []
    for b in batches:
        s = timer.seconds(b, 1, t)
        rows.append({"batch": b, "seconds": s, "rate": sympy.Integer(b) / s})
    return timer, rows


def draft_for(model, context=None):
    """(name, parameters) of the draft the section prices: ``("mtp", None)``, the model's own
    multi-token-prediction module, where it declares one; else the smallest preset of its family
    with the same vocabulary, fewer parameters and positions for *context* tokens (a learned
    position table of T_max >= context, or none); None when there is neither."""
    from ..derive import serving_spec as sp
    from ..families import presets
    from ..model.model import load

    if sp.has_mtp(model):
        return "mtp", None
    vocab = model.sizes.get("V")
    own = model.params.expr.xreplace(model.bindings)
    best = None
    for name, pre in sorted(presets().items()):
        if pre.family != model.family.name or name == model.name or pre.sizes.get("V") != vocab:
            continue
        if context is not None and pre.sizes.get("T_max", context) < context:
            continue
        d = load(name)
        n = d.params.expr.xreplace(d.bindings)
        if n.is_Integer and own.is_Integer and n < own and (best is None or n < best[1]):
            best = (name, n)
    return (best[0], best[1]) if best else None


def _speculative(model, opts, timer, t):
    from ..derive import serving_spec as sp
    from ..model.model import load

    found = draft_for(model, t)
    if found is None:
        return None, (f"Speculative decoding is not drawn: the family has no smaller preset with the same "
                      f"vocabulary and a context of {t:,} tokens to draft for it, and the model declares no "
                      f"multi-token-prediction module.")
    name, _ = found
    try:
        if name == "mtp":
            draft = sp.StepTimer(sp.mtp_model(model), module="mtp", **opts)
            what = (f"its own multi-token-prediction module (DeepSeek-V3, Sec.~2.2), reused for each draft "
                    f"token")
        else:
            d = load(name, B=int(model.bindings[next(k for k in model.bindings if k.name == 'B')]), T=t)
            draft = sp.StepTimer(d, **opts)
            what = f"{tex_texttt(name)}, the smallest preset of its family with the same vocabulary"
    except SymgptError as e:
        return None, f"Speculative decoding is not drawn: the draft cannot be priced here ({tex_escape(str(e))})."
    spec = sp.Speculation(timer, draft, 0)
    plain = timer.seconds(SPEC_BATCH, 1, t)
    series = []
    for g in GAMMAS:
        step = spec.step_time(g, SPEC_BATCH, t)
        pts = [(a, sp.tokens_per_step(a, g) * plain / step) for a in ALPHAS]
        series.append({"gamma": g, "points": pts,
                       "coords": Tex(" ".join(f"({_num(a)},{_num(v)})" for a, v in pts))})
    top = max(v for s in series for _, v in s["points"])
    low = min(v for s in series for _, v in s["points"])
    return {"draft": Tex(what), "series": series, "batch": SPEC_BATCH, "plain": Tex(tex_fixed(plain * 1000, 4)),
            "ymax": _num(max(top, 1) * sympy.Rational(11, 10), 3), "ymin": _num(min(low, 1) * sympy.Rational(9, 10), 3),
            "styles": ["blue, thick", "red!80!black, thick, dashed", "green!50!black, thick, densely dotted"],
            "best": max(((s["gamma"], v) for s in series for a, v in s["points"] if a == ALPHAS[-1]),
                        key=lambda gv: gv[1])}, None


def serving(model, notation, **options) -> dict:
    """The section's context; a model the engine cannot price here gets one sentence saying why."""
    try:
        return _serving(model, notation)
    except SymgptError as e:
        return _skip(model, Tex(f"Serving is left out for {tex_texttt(model.name)}: {tex_escape(str(e))}."))


def _serving(model, notation) -> dict:
    from ..core.hardware import hardware

    why = _left_out(model)
    if why is not None:
        return _skip(model, Tex(f"Serving is left out for {tex_texttt(model.name)}: {why}"))
    T = _generated(model)
    t = model.bindings.get(T)
    if t is None:
        return _skip(model, Tex(f"Serving is left out: the context length ${notation.symbol('T')}$ is not "
                                "set (\\texttt{--set T=N})."))
    t = int(t)
    try:
        opts, n_t = _fit(model, T, t)
    except SymgptError as e:
        return _skip(model, Tex(f"Serving is left out for {tex_texttt(model.name)}: {tex_escape(str(e))}."))
    hw = hardware(HARDWARE)
    head = {"model": model.name, "skip": None,
            "hardware": {"name": Tex(tex_texttt(hw.name)), "title": hw.title, "source": hw.source},
            "T": Tex(notation.symbol("T")), "t": Tex(tex_int(t)), "max_chips": CHIPS[-1]}
    if opts is None:
        return {**head, "nofit": Tex(tex_escape(n_t))}
    cap = _capacity(model, opts, T, t)
    chips = opts.get("chips", 1)
    xs = [x for x, _ in cap["points"]]
    ys = [n for _, n in cap["points"]]
    capacity_fig = {"coords": Tex(" ".join(f"({x},{int(n)})" for x, n in cap["points"] if n >= 1)),
                    "xmin": xs[0], "xmax": xs[-1], "ymin": _num(max(min(ys), 1) * sympy.Rational(1, 2), 3),
                    "ymax": _num(max(ys) * 2, 3)}
    capacity_fig["xticks"], capacity_fig["xticklabels"] = _ticks(xs)
    timer, rows = _throughput(model, opts, t, n_t)
    thr = {"coords": Tex(" ".join(f"({r['batch']},{_num(r['rate'])})" for r in rows)),
           "xmin": rows[0]["batch"], "xmax": rows[-1]["batch"],
           "rows": [{"batch": Tex(tex_int(r["batch"])), "ms": Tex(tex_fixed(r["seconds"] * 1000, 4)),
                     "rate": Tex(tex_fixed(r["rate"], 4))} for r in rows]}
    thr["xticks"], thr["xticklabels"] = _ticks([r["batch"] for r in rows])
    spec, spec_skip = _speculative(model, opts, timer, t)
    if spec is not None:
        g, v = spec.pop("best")
        spec["best_gamma"], spec["best_value"] = g, Tex(tex_fixed(v, 4))
        spec["alpha_max"] = Tex(tex_fixed(ALPHAS[-1], 1))
    return {**head, "nofit": None, "chips": chips, "cap": cap, "n_t": Tex(tex_int(n_t)),
            "capacity_fig": capacity_fig, "capacity_rows": [{"T": Tex(tex_int(x)), "n": Tex(tex_int(n))}
                                                            for x, n in cap["points"]],
            "throughput": thr, "spec": spec, "spec_skip": spec_skip}
