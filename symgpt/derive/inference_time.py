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
(a Max whose arguments cross inside the range is split at the crossing). TTFT is the prefill;
the time per output token the mean decode step, (generate - TTFT) / (G - 1); tokens/s B·G over
the generation.
"""

from __future__ import annotations

import sympy

from .. import roles
from ..errors import SymgptError
from ..ops.base import numel
from ..quantity import Quantity
from ..symbols import B, BW_link, BW_mem, F_peak
from .inference import _q, book_weight_bytes, kv_cache, phase_flops, priced_ops
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
    return _q(s, f"inference.{phase}.time", parts, "s",
              f"{what}: seconds on a roofline, max(FLOPs / F_peak, bytes / BW_mem)")


def _expand(e):
    return e if e.has(sympy.Min, sympy.Max) else expanded(e)


def intensity(model, **options) -> Quantity:
    s = setup(model, **options)
    f = model.quantity("inference.decode.flops", **options).expr
    b = model.quantity("inference.decode.bytes", **options).expr
    return _q(s, "inference.intensity", [("decode", sympy.cancel(f / b))], "FLOPs/byte",
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
    q = _q(s, "inference.critical_batch", [("B", b_crit)], "sequences",
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
    p = sympy.Poly(sympy.expand(e), t)
    if p.degree() > 1:
        return None
    c = p.all_coeffs()
    return (c[0], c[1]) if len(c) == 2 else (sympy.Integer(0), c[0])


def _sum_term(term, t, lo, hi):
    """sum_{t=lo}^{hi} term, exactly: a Max of two linear functions of t is split where they cross."""
    maxes = [m for m in term.atoms(sympy.Max) if m.has(t)]
    if not maxes:
        return sympy.summation(term, (t, lo, hi))
    if len(maxes) == 1 and len(maxes[0].args) == 2:
        m = maxes[0]
        coeff = sympy.simplify(term / m)
        a, b = m.args
        la, lb = _linear(a, t), _linear(b, t)
        numeric = lo.is_number and hi.is_number and all(v.is_number for v in (*(la or ()), *(lb or ())))
        if not coeff.has(t) and la and lb and numeric:
            slope, const = la[0] - lb[0], la[1] - lb[1]      # a - b = slope·t + const
            if slope == 0:
                return coeff * sympy.summation(a if const >= 0 else b, (t, lo, hi))
            cross = -const / slope                             # a >= b for t >= cross when slope > 0
            first, second = (b, a) if slope > 0 else (a, b)
            k = min(max(sympy.ceiling(cross), lo), hi + 1)     # first t on the second side
            return coeff * (sympy.summation(first, (t, lo, k - 1)) + sympy.summation(second, (t, k, hi)))
    return sympy.Sum(term, (t, lo, hi))


def _generation(model, options):
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
    s, ttft, steps, P, G = _generation(model, options)
    parts = [(f"prefill/{p}", e) for p, e in ttft] + [(f"decode/{p}", e) for p, e in steps]
    return _gen_q(s, "inference.generate.time", parts, "s",
                  f"generating G = {G} tokens after a prompt of P = {P}: the prefill (the first token) plus "
                  f"{G - 1} decode steps over a cache of {P} to {P + G - 2} tokens, summed exactly")


def ttft(model, **options) -> Quantity:
    s, pre, _, P, G = _generation(model, options)
    return _gen_q(s, "inference.ttft", pre, "s", f"time to first token: the prefill of P = {P} tokens")


def tpot(model, **options) -> Quantity:
    s, _, steps, P, G = _generation(model, options)
    if G < 2:
        raise SymgptError("the time per output token needs generate >= 2 (one decode step at least)")
    return _gen_q(s, "inference.tpot", [(p, e / (G - 1)) for p, e in steps], "s",
                  f"time per output token: the mean of the {G - 1} decode steps after a prompt of P = {P}")


def tokens_per_s(model, **options) -> Quantity:
    s, pre, steps, P, G = _generation(model, options)
    total = sympy.Add(*[e for _, e in pre + steps])
    return _gen_q(s, "inference.tokens_per_s", [("tokens", B * G / total)], "tokens/s",
                  f"tokens per second over the generation: B·G / generate time (G = {G}, P = {P})")


def prefill_time(model, **options) -> Quantity:
    return phase_time(model, "prefill", **options)


def decode_time(model, **options) -> Quantity:
    return phase_time(model, "decode", **options)
