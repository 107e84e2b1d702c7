"""Inference times on a roofline: prefill and decode step times, arithmetic intensity, the
critical batch, and a whole generation (TTFT, time per output token, tokens/s).

Times are exact expressions in the device's peak ``F_peak`` (FLOP/s) and memory bandwidth
``BW_mem`` (bytes/s) -- bound when a hardware profile or ``peak``/``bandwidth`` is given, left
symbolic otherwise: a symbolic roofline.

* ``default``: each op takes max(FLOPs / F_peak, bytes / BW_mem), summed over the step's ops;
* ``scaling-book``: KV bytes / BW_mem + max(FLOPs / F_peak, parameter bytes / BW_mem)
  (Austin et al., *How to Scale Your Model*, Part 7, "Theoretical Step Time (General)").

With ``chips`` > 1 each row-parallel output (the attention output projection, the FFN's down
projection: the roles ``attention.out`` and ``ffn.down``) is all-reduced over the link: a ring
all-reduce of M bytes takes 2·(N-1)/N · M / BW_link, added to the step (not overlapped).

A generation of G new tokens after a prompt of P: the prefill (which yields the first token)
plus G - 1 decode steps whose cache holds P, P + 1, ..., P + G - 2 tokens, summed in closed form
(a Min or Max whose arguments cross inside the range -- a roofline's Max, a sliding window's
Min(W, t + 1) -- is split at each crossing). TTFT is the prefill; the time per output token the
mean decode step, (generate - TTFT) / (G - 1); tokens/s B·G over the generation. A bidirectional
encoder (BERT, ViT) caches nothing and generates nothing: its generation is a SymgptError.
"""

from __future__ import annotations

import sympy

from ..graph import roles
from ..core.errors import SymgptError
from ..ops.base import numel
from .quantity import Quantity
from ..core.symbols import B, BW_link, BW_mem, F_peak
from .inference import inference_quantity, book_weight_bytes, kv_cache, phase_flops, priced_ops
from .inference_setup import setup
from .shortcuts import expanded, roofline_max
from .step import generated, step

ALL_REDUCE = (roles.OUT, roles.FFN_DOWN)


def all_reduces(s, model, phase) -> list:
    """(path, seconds) of the tensor-parallel all-reduces of a step (none on one device)."""
    if s.chips == 1:
        return []
    arch = model.arch
    out = []
    for o in step(arch, phase).ops:
        if arch.role(o.node) in ALL_REDUCE:
            size = numel(o.written) * s.act * arch.activity(o.node)
            out.append((f"{o.node}/all_reduce", 2 * sympy.Rational(s.chips - 1, s.chips) * size / BW_link))
    return out


def phase_time(model, phase, **options) -> Quantity:
    s = setup(model, **options)
    arch = model.arch
    st = step(arch, phase)
    if s.convention == "scaling-book":
        flops = phase_flops(model, phase, **options).expr
        wbytes = sympy.Add(*[e for _, e in book_weight_bytes(s, model)])
        parts = [("kv_cache", kv_cache(model, **options).expr / BW_mem),
                 ("weights", roofline_max(expanded(flops / F_peak), expanded(wbytes / BW_mem)))]
    else:
        parts = [(o.node, roofline_max(expanded(f / F_peak), _expand(b / BW_mem)))
                 for o, f, b in priced_ops(s, arch, st)]
    parts += all_reduces(s, model, phase)
    what = {"prefill": "prefill of B prompts of T tokens",
            "decode": "one decode step (the cache holds T tokens)"}[phase]
    return inference_quantity(s, f"inference.{phase}.time", parts, "s",
              f"{what}: seconds on a roofline, max(FLOPs / F_peak, bytes / BW_mem)")


def _expand(e):
    return e if e.has(sympy.Min, sympy.Max) else expanded(e)


def intensity(model, **options) -> Quantity:
    s = setup(model, **options)
    f = model.quantity("inference.decode.flops", **options).expr
    b = model.quantity("inference.decode.bytes", **options).expr
    return inference_quantity(s, "inference.intensity", [("decode", sympy.cancel(f / b))], "FLOPs/byte",
              "arithmetic intensity of a decode step: its FLOPs over the bytes it moves")


def critical_batch(model, **options) -> Quantity:
    """The batch B at which a decode step turns from memory- to compute-bound: FLOPs / F_peak =
    bytes / BW_mem (scaling-book: parameter bytes only), solved for B."""
    s = setup(model, **options)
    m = model
    f = m.quantity("inference.decode.flops", **options).expr
    if s.convention == "scaling-book":
        b = sympy.Add(*[e for _, e in book_weight_bytes(s, m)])
    else:
        b = m.quantity("inference.decode.bytes", **options).expr
    x = sympy.Dummy("B", positive=True)
    num, _ = sympy.fraction(sympy.together((f / F_peak - b / BW_mem).xreplace({B: x})))
    if num.has(sympy.Min, sympy.Max):
        raise SymgptError("the critical batch of a mixture of experts (weights read depend on B through "
                          "Min(E, k·B)) is not solved in closed form; use inference.decode.time")
    poly = sympy.Poly(sympy.expand(num), x)
    if poly.degree() != 1:
        raise SymgptError("the decode step's FLOPs and bytes are not linear in B: no closed-form critical batch")
    slope, const = poly.all_coeffs()
    roots = [r for r in (-const / slope,) if r.is_positive is not False]
    if len(roots) != 1:
        raise SymgptError("no single positive critical batch: the decode step never turns compute-bound "
                          "(its bytes grow with B as fast as its FLOPs)")
    b_crit = sympy.factor_terms(sympy.cancel(roots[0]))
    q = inference_quantity(s, "inference.critical_batch", [("B", b_crit)], "sequences",
           "critical batch: the B at which a decode step's FLOPs / F_peak equal its bytes / BW_mem "
           "(memory-bound below, compute-bound above)")
    v = q.value
    if v is not None and v <= 0:
        q = Quantity(q.name, q.breakdown, q.bindings, q.unit, q.convention, q.notes + (
            "not positive here: per sequence, the step's bytes (its KV-cache and activation reads and "
            "writes) outweigh its FLOPs at this peak-to-bandwidth ratio, so no batch makes this decode "
            "step compute-bound",))
    return q


# --- a whole generation ------------------------------------------------------------------------
def _linear(e, t):
    """(slope, constant) of *e* = slope·t + constant with numbers for both, or None."""
    e = sympy.expand(e)
    if e.has(sympy.Min, sympy.Max) and any(m.has(t) for m in e.atoms(sympy.Min, sympy.Max)):
        return None
    slope = e.diff(t)
    if slope.has(t) or not slope.is_number:
        return None
    const = sympy.expand(e - slope * t)
    return (slope, const) if const.is_number else None


def _innermost(term, t):
    """A Min or Max of *term* that depends on t and holds no other such Min or Max, or None."""
    for m in sympy.preorder_traversal(term):
        if isinstance(m, (sympy.Min, sympy.Max)) and m.has(t) and not any(
                a.has(t) and a.has(sympy.Min, sympy.Max) for a in m.args):
            return m
    return None


def _extreme(m, pieces, ts):
    """The argument of the Min or Max *m* that is its value at every t of *ts* (the ends of a
    range where no two arguments cross: then it is its value on the whole range)."""
    pick = max if isinstance(m, sympy.Max) else min
    for a, (slope, const) in zip(m.args, pieces):
        if all(slope * x + const == pick(s * x + c for s, c in pieces) for x in ts):
            return a
    raise AssertionError("no argument is the extreme at both ends")  # (the split guarantees one)


def _sum_term(term, t, lo, hi):
    """sum_{t=lo}^{hi} term, exactly. A Min or Max of functions linear in t (numbers for every
    other symbol) is split where two of its arguments cross: on each piece one argument is its
    value, so the sum is a sum of closed forms (a sliding window's Min(W, t + 1) inside a
    roofline's Max: split at t = W - 1, then where the Max's arguments cross). Anything else
    (a symbolic peak or bandwidth, which orders nothing) stays an unevaluated Sum."""
    if lo > hi:
        return sympy.Integer(0)
    m = _innermost(term, t)
    if m is None:
        return sympy.summation(term, (t, lo, hi))
    pieces = [_linear(a, t) for a in m.args]
    if not (lo.is_number and hi.is_number) or any(p is None for p in pieces):
        return sympy.Sum(term, (t, lo, hi))
    cuts = set()
    for i, (s1, c1) in enumerate(pieces):
        for s2, c2 in pieces[i + 1:]:
            if s1 != s2:
                k = sympy.floor((c2 - c1) / (s1 - s2)) + 1   # the first integer t past the crossing
                if lo < k <= hi:
                    cuts.add(k)
    bounds = [lo, *sorted(cuts), hi + 1]
    total = sympy.Integer(0)
    for a, b in zip(bounds, bounds[1:]):
        arg = _extreme(m, pieces, (a, b - 1))
        total += _sum_term(term.xreplace({m: arg}), t, a, b - 1)
    return total


def _generating(model, name):
    """Refuse a generation of a model that generates nothing: a bidirectional encoder (BERT,
    ViT) caches no keys and values and decodes no token after another."""
    from .kvcache import cache_tensors
    from .recurrent import recurrent_ops

    # a model with recurrent layers generates with their state, a KV cache or not (Mamba has none)
    if (not cache_tensors(model.arch) and not recurrent_ops(model.arch)) or \
            not isinstance(generated(model.arch), sympy.Symbol):
        raise SymgptError(f"{name} needs a model that generates tokens (a decoder or an encoder-decoder); "
                          f"{model.name} is a bidirectional encoder: no KV cache, no token-by-token decoding")


def _generation(model, options, name):
    _generating(model, name)
    prompt, gen = options.get("prompt"), options.get("generate")
    if prompt is None or gen is None:
        raise SymgptError("a generation needs prompt=P and generate=G (--prompt, --generate)")
    s = setup(model, **options)
    T = generated(model.arch)  # the length that grows (T; an encoder--decoder's T_dec)
    model.with_(**{T.name: prompt + gen - 1})  # the last position must fit the model (T <= T_max)
    rest = {k: v for k, v in options.items() if k not in ("prompt", "generate")}
    m = model
    pre = m.quantity("inference.prefill.time", **rest)
    dec = m.quantity("inference.decode.time", **rest)
    bind = {k: v for k, v in s.bindings.items() if k != T}
    t = sympy.Symbol("t", integer=True, positive=True)
    P, G = sympy.Integer(prompt), sympy.Integer(gen)
    ttft = [(p, e.xreplace({T: P}).xreplace(bind)) for p, e in pre.breakdown]
    steps = []
    if G > 1:
        for p, e in dec.breakdown:
            e = e.xreplace(bind).xreplace({T: t})
            total = sympy.Add(*[_sum_term(term, t, P, P + G - 2) for term in sympy.Add.make_args(e)])
            steps.append((p, total))
    return s, ttft, steps, P, G


def _gen_q(s, name, parts, unit, what):
    return Quantity(name, tuple((p, e) for p, e in parts if e != 0), s.bindings, unit, s.convention,
                    s.notes(what))


def generate_time(model, **options) -> Quantity:
    s, ttft, steps, P, G = _generation(model, options, "inference.generate.time")
    parts = [(f"prefill/{p}", e) for p, e in ttft] + [(f"decode/{p}", e) for p, e in steps]
    return _gen_q(s, "inference.generate.time", parts, "s",
                  f"generating G = {G} tokens after a prompt of P = {P}: the prefill (the first token) plus "
                  f"{G - 1} decode steps over a cache of {P} to {P + G - 2} tokens, summed exactly")


def ttft(model, **options) -> Quantity:
    s, pre, _, P, G = _generation(model, options, "inference.ttft")
    return _gen_q(s, "inference.ttft", pre, "s", f"time to first token: the prefill of P = {P} tokens")


def tpot(model, **options) -> Quantity:
    s, _, steps, P, G = _generation(model, options, "inference.tpot")
    if G < 2:
        raise SymgptError("the time per output token needs generate >= 2 (one decode step at least)")
    return _gen_q(s, "inference.tpot", [(p, e / (G - 1)) for p, e in steps], "s",
                  f"time per output token: the mean of the {G - 1} decode steps after a prompt of P = {P}")


def tokens_per_s(model, **options) -> Quantity:
    s, pre, steps, P, G = _generation(model, options, "inference.tokens_per_s")
    total = sympy.Add(*[e for _, e in pre + steps])
    return _gen_q(s, "inference.tokens_per_s", [("tokens", B * G / total)], "tokens/s",
                  f"tokens per second over the generation: B·G / generate time (G = {G}, P = {P})")


def prefill_time(model, **options) -> Quantity:
    return phase_time(model, "prefill", **options)


def decode_time(model, **options) -> Quantity:
    return phase_time(model, "decode", **options)
