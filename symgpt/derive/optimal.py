"""Compute-optimal planning: the parametric loss L(N, D) = E + A/N^α + B/D^β, its published fits
as data, and the compute-optimal frontier in closed form.

With C = 6·N·D (the fits' own convention), minimising L at fixed C gives
N_opt = G·(C/6)^a and D_opt = G⁻¹·(C/6)^b with a = β/(α+β), b = α/(α+β) and
G = (α·A/(β·B))^(1/(α+β)) (Hoffmann et al. 2022, Eq. 4). The constants are the published
decimals taken as exact rationals; the predictions are irrational powers of them, evaluated to
``DIGITS`` significant digits (mpmath) -- far beyond the fits' own 3 to 5. One given of C, N or
D places a point on the frontier.

For a given architecture, :func:`for_model` replaces 6ND by the model's exact training FLOPs per
token (``flops.train``, per token, under a convention): the tokens C buys, the loss the fit
predicts there, and how far 6N is from the exact count.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..core.errors import SymgptError
from .checks import positive
from .quantity import Quantity

R = sympy.Rational
DIGITS = 30


@dataclass(frozen=True)
class Fit:
    name: str
    source: str
    E: sympy.Rational
    A: sympy.Rational
    B: sympy.Rational
    alpha: sympy.Rational
    beta: sympy.Rational

    @property
    def a(self):
        return self.beta / (self.alpha + self.beta)

    @property
    def b(self):
        return self.alpha / (self.alpha + self.beta)

    @property
    def G(self):
        return _pow(self.alpha * self.A / (self.beta * self.B), 1 / (self.alpha + self.beta))

    def describe(self) -> str:
        g = lambda x: f"{float(x):g}"  # noqa: E731  (the published decimals, for display)
        return f"L(N, D) = {g(self.E)} + {g(self.A)}/N^{g(self.alpha)} + {g(self.B)}/D^{g(self.beta)}"

    def loss(self, N, D):
        return self.E + self.A / _pow(N, self.alpha) + self.B / _pow(D, self.beta)


FITS = {
    "hoffmann2022": Fit("hoffmann2022", "Hoffmann et al. 2022 (Chinchilla), Approach 3, Eq. 10",
                        R("1.69"), R("406.4"), R("410.7"), R("0.34"), R("0.28")),
    "besiroglu2024": Fit("besiroglu2024", "Besiroglu et al. 2024, Chinchilla Scaling: A replication attempt, Table 1",
                         R("1.8172"), R("482.01"), R("2085.43"), R("0.3478"), R("0.3658")),
}


def fit(name: str) -> Fit:
    try:
        return FITS[name]
    except KeyError:
        raise SymgptError(f"unknown fit {name!r}; known fits: {', '.join(FITS)}") from None


def _pow(x, e) -> sympy.Float:
    """x^e to DIGITS significant digits (x, e exact; SymPy would spend minutes on the radicals)."""
    import mpmath

    with mpmath.workdps(DIGITS + 10):
        v = mpmath.power(mpmath.mpf(sympy.Rational(x).p) / sympy.Rational(x).q if isinstance(x, sympy.Rational)
                         else mpmath.mpf(str(x)), mpmath.mpf(e.p) / e.q)
        return sympy.Float(v, DIGITS)


def frontier(f: Fit, compute=None, params=None, tokens=None) -> sympy.Expr:
    """C/6 at the frontier point fixed by exactly one of *compute*, *params*, *tokens*."""
    given = [(n, v) for n, v in (("compute", compute), ("params", params), ("tokens", tokens)) if v is not None]
    if len(given) != 1:
        raise SymgptError("give exactly one of --compute, --params, --tokens")
    name, v = given[0]
    v = positive(name, v)
    if name == "compute":
        return v / 6
    if name == "params":
        return _pow(v / f.G, 1 / f.a)
    return _pow(v * f.G, 1 / f.b)


def optimal(f: Fit, compute=None, params=None, tokens=None) -> list[Quantity]:
    """``optimal.params``, ``optimal.tokens``, ``optimal.loss`` and ``optimal.compute``."""
    c6 = frontier(f, compute, params, tokens)
    N, D = f.G * _pow(c6, f.a), _pow(c6, f.b) / f.G
    notes = (f"fit {f.name}: {f.describe()} [{f.source}]",
             "compute-optimal with C = 6ND: N_opt = G(C/6)^(β/(α+β)), D_opt = G^-1 (C/6)^(α/(α+β)), "
             "G = (αA/(βB))^(1/(α+β)) (Hoffmann et al. 2022, Eq. 4)")
    return [Quantity("optimal.params", (("N_opt", N),), {}, "parameters", f.name, notes),
            Quantity("optimal.tokens", (("D_opt", D),), {}, "tokens", f.name, notes),
            Quantity("optimal.loss", (("L(N_opt, D_opt)", f.loss(N, D)),), {}, "nats", f.name, notes),
            Quantity("optimal.compute", (("6 N_opt D_opt", 6 * c6),), {}, "FLOPs", f.name, notes)]


def for_model(model, f: Fit, compute, **flops_options) -> list[Quantity]:
    """What *compute* buys for *model* at its exact training FLOPs per token: tokens, loss, and
    the count 6N would give (N = all parameters, as the fits count them)."""
    compute = positive("compute", compute)
    q = model.quantity("flops.train", per="token", **flops_options)
    per_token = q.value
    N = model.params.value
    if per_token is None or N is None:
        raise SymgptError(f"{model.name}: bind every size (--set T=...) to price its tokens")
    D = compute / per_token
    notes = (f"exact training FLOPs per token {per_token} (convention {q.convention}) in place of 6N = {6 * N}",
             f"fit {f.name} [{f.source}]")
    return [Quantity("optimal.model_tokens", (("D = C / flops.train per token", D),), {}, "tokens", f.name, notes),
            Quantity("optimal.model_loss", (("L(N, D)", f.loss(N, D)),), {}, "nats", f.name, notes),
            Quantity("optimal.6ND_error", (("(6N - exact)/exact", R(6 * N, 1) / per_token - 1),), {}, "",
                     f.name, notes)]
