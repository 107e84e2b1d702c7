"""The time of one scheduler step -- a batch mixing prefill chunks and decoding sequences --
from the op graph's roofline, derived once symbolically and then evaluated as floats.

Each op of ``symgpt infer``'s decode step (``inference.decode.time``, the default convention:
max(FLOPs / F_peak, bytes / BW_mem) per op, summed) has FLOPs and bytes of the form
``c + a·B + b·B·T`` in the batch B and the cache length T: a constant (its weights), a part per
sequence and a part per cached token. Each op of the prefill of one prompt of T tokens is a
polynomial in T of degree two at most (the attention's T·T scores). A mixed step is priced as
one pass over the ops, each op's FLOPs and bytes the sum of its parts (weights read once):

* a decoding sequence whose cache holds t tokens adds ``a + b·t`` (the decode step at B = 1, T = t);
* a prefill chunk of k new tokens after p cached ones adds the prefill polynomial's
  per-sequence part, its part linear in T counting the k tokens and its T·T part (the
  attention's query-key pairs) counting the chunk's pairs: k·(p + k) (each query against every
  key so far: the score matrix the chunk writes, and its FLOPs without --causal); with --causal
  the FLOPs' T·T part, half a pair's, counts (p + k)^2 - p^2 (the difference of the prefills of
  p + k and of p tokens: the causal pairs, exactly);
  a part of the prefill that grows with T alone (a rotary table's reads) is priced at the
  longest chunk end.

A step of B decodes alone is exactly ``inference.decode.time`` when every cache holds T tokens;
a step of B whole prompts of P tokens alone is exactly ``inference.prefill.time`` at B, T = P.
Tensor-parallel all-reduces (``chips`` > 1) add their seconds per token, as in those quantities.
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from ..core.symbols import B, BW_mem, F_peak

#: the step's features, after the constant: decode sequences, their cached tokens, prefill
#: tokens, the chunks' query-key pairs k·(p + k) and (p + k)^2 - p^2, the longest chunk end, its square
FEATURES = ("decodes", "decode_context", "prefill_tokens", "pairs", "causal_pairs", "longest", "longest_sq")


def _monomials(e, T, what, node):
    """{(i, j): coefficient} of *e* as a polynomial in B and T, or a refusal."""
    e = sympy.expand(e)
    if e.has(sympy.Min, sympy.Max, sympy.Piecewise) or not e.free_symbols <= {B, T}:
        raise SymgptError(f"the simulated step time needs each op's FLOPs and bytes polynomial in B and T; "
                          f"{what} of {node} is {e} (a sliding window, a mixture of experts' Min(E, k·B) "
                          "or an unbound size is not simulated yet)")
    poly = sympy.Poly(e, B, T)
    return {m: sympy.Rational(c) for m, c in poly.terms()}


class StepCost:
    """``step_time(prefill_chunks, decode_contexts) -> seconds``: *prefill_chunks* a sequence
    of (cached, new) token counts, *decode_contexts* the cache length of each decoding sequence.
    ``fast(...)`` takes the features directly (what the simulation passes)."""

    def __init__(self, const, coef, notes=()):
        import numpy as np

        self._np = np
        n = len(FEATURES)
        cf = np.array(coef[0], float).reshape(-1, n)
        cm = np.array(coef[1], float).reshape(-1, n)
        c = {w: (np.array(f, float), np.array(b, float)) for w, (f, b) in const.items()}
        # an op with no FLOPs (or no bytes) is its other side: those sum into one linear row;
        # identical ops (a block's q, k and v projections) merge with their count
        flat = ~cf.any(1) & ~np.any([c[w][0] for w in c], 0)
        self.linear = (cm[flat].sum(0), {w: float(c[w][1][flat].sum()) for w in c})
        rows = {}
        for i in np.flatnonzero(~flat):
            key = (tuple(cf[i]), tuple(cm[i]), *((c[w][0][i], c[w][1][i]) for w in sorted(c)))
            rows[key] = rows.get(key, 0) + 1
        keys = list(rows)
        count = np.array([rows[k] for k in keys], float)
        self.cf = np.array([k[0] for k in keys], float).reshape(-1, n) * count[:, None]
        self.cm = np.array([k[1] for k in keys], float).reshape(-1, n) * count[:, None]
        self.const = {w: (np.array([k[2 + j][0] for k in keys], float) * count,
                          np.array([k[2 + j][1] for k in keys], float) * count) for j, w in enumerate(sorted(c))}
        self.rows = {w: [(f0, m0, tuple(a), tuple(b)) for f0, m0, a, b in zip(
            self.const[w][0].tolist(), self.const[w][1].tolist(), self.cf.tolist(), self.cm.tolist())]
            for w in self.const}
        self.line = (self.linear[0].tolist(), self.linear[1])
        # decode-only steps (most of them) see two features: their rows unrolled
        self.decode_rows = [(f0, a[0], a[1], m0, b[0], b[1]) for f0, m0, a, b in self.rows["decode"]]
        self.notes = tuple(notes)

    def fast(self, decodes, context, tokens, pairs, causal_pairs, longest) -> float:
        """The step's seconds from its features (FEATURES, without the square of *longest*)."""
        if not decodes and not tokens:
            return 0.0
        row, c0 = self.line
        if not tokens:
            t = c0["decode"] + row[0] * decodes + row[1] * context
            for f0, a0, a1, m0, b0, b1 in self.decode_rows:
                f = f0 + a0 * decodes + a1 * context
                m = m0 + b0 * decodes + b1 * context
                t += f if f > m else m
            return t
        which = "both" if decodes else "prefill"
        x = (decodes, context, tokens, pairs, causal_pairs, longest, longest * longest)
        t = c0[which] + sum([a * b for a, b in zip(row, x)])
        for f0, m0, a, b in self.rows[which]:
            f = f0 + sum([u * v for u, v in zip(a, x)])
            m = m0 + sum([u * v for u, v in zip(b, x)])
            t += f if f > m else m
        return t

    def __call__(self, prefill_chunks=(), decode_contexts=()) -> float:
        chunks = [(int(p), int(k)) for p, k in prefill_chunks if k]
        ctx = [int(t) for t in decode_contexts]
        tokens = sum(k for _, k in chunks)
        pairs = sum(k * (p + k) for p, k in chunks)
        causal = sum((p + k) ** 2 - p * p for p, k in chunks)
        longest = max((p + k for p, k in chunks), default=0)
        return self.fast(len(ctx), sum(ctx), tokens, pairs, causal, longest)


def step_cost(model, **options) -> StepCost:
    """The step time of *model* under ``symgpt infer``'s options (``hardware=``, ``peak=``,
    ``bandwidth=``, ``chips=``, ``weight_bits=``, ``causal=``, ...), default convention only.
    *model* leaves B and T unbound (they are the simulation's); every other size bound."""
    from ..derive.inference import priced_ops
    from ..derive.inference_setup import setup
    from ..derive.inference_time import all_reduces
    from ..derive.step import generated, step

    options = {k: v for k, v in options.items() if k not in ("prompt", "generate")}
    if options.get("convention", "default") != "default":
        raise SymgptError("the simulation prices steps with the default convention (a roofline per op)")
    bound = [k for k in ("B", "T") if k in model.sizes]
    if bound:
        model = model.free(*bound)
    s = setup(model, **options)
    peak, bw = s.bindings.get(F_peak), s.bindings.get(BW_mem)
    if peak is None or bw is None:
        raise SymgptError("the simulation needs a device: --hardware NAME, or --peak and --bandwidth")
    from ..derive.kvcache import cache_tensors

    T = generated(model.arch)
    if not cache_tensors(model.arch) or not isinstance(T, sympy.Symbol):
        raise SymgptError(f"the simulation serves models that generate tokens; {model.name} is a bidirectional "
                          "encoder (no KV cache, no decoding)")
    if T.name != "T":
        raise SymgptError(f"the simulation serves decoder-only models; {model.name} decodes over {T.name}")
    bind = {k: v for k, v in s.bindings.items() if k not in (B, T)}
    ops = {}
    for phase in ("decode", "prefill"):
        for o, f, b in priced_ops(s, model.arch, step(model.arch, phase)):
            ops.setdefault(o.node, {})[phase] = (f.xreplace(bind) / peak, b.xreplace(bind) / bw)
        for node, secs in all_reduces(s, model, phase):
            ops.setdefault(node, {})[phase] = (sympy.Integer(0), secs.xreplace(bind))
    const = {w: ([], []) for w in ("decode", "prefill", "both")}
    coef = ([], [])
    for node, phases in ops.items():
        for k in (0, 1):  # FLOPs-seconds, bytes-seconds
            what = ("FLOPs", "bytes")[k]
            dec = _monomials(phases["decode"][k], T, f"decode {what}", node) if "decode" in phases else {}
            pre = _monomials(phases["prefill"][k], T, f"prefill {what}", node) if "prefill" in phases else {}
            if set(dec) - {(0, 0), (1, 0), (1, 1)} or set(pre) - {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)}:
                raise SymgptError(f"the simulated step time needs {what} of {node} of the form c + a·B + b·B·T "
                                  "(decode) and of degree 2 in T (prefill)")
            if pre.get((1, 0), 0) != 0:
                raise SymgptError(f"{what} of the prefill's {node} has a part per sequence that no token "
                                  "carries; not simulated")
            d0, p0 = dec.get((0, 0), 0), pre.get((0, 0), 0)
            const["decode"][k].append(d0)
            const["prefill"][k].append(p0)
            const["both"][k].append(max(d0, p0))
            square = pre.get((1, 2), 0)
            causal = k == 0 and bool(options.get("causal"))  # the FLOPs of causal scores
            coef[k].extend([dec.get((1, 0), 0), dec.get((1, 1), 0), pre.get((1, 1), 0),
                            0 if causal else square, square if causal else 0, pre.get((0, 1), 0), pre.get((0, 2), 0)])
    notes = ["step time: one pass over the op graph per step, each op max(FLOPs / F_peak, bytes / BW_mem) "
             "with the FLOPs and bytes of its decodes and prefill chunks summed (weights read once); a chunk "
             "of k tokens after p cached is priced as a prefill of k tokens whose attention covers k·(p + k) "
             "query-key pairs" + (" (its FLOPs the causal ones, (p + k)^2 - p^2 halved)" if options.get("causal") else "")]
    return StepCost({w: tuple(v) for w, v in const.items()}, coef, notes)
