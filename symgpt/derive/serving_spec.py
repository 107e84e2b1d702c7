"""Step times for serving, and speculative decoding (Leviathan et al. 2023), exactly.

:class:`StepTimer` prices one step of a batch on the roofline of ``inference_time`` (each op
max(FLOPs / F_peak, bytes / BW_mem), summed, plus the tensor-parallel all-reduces): ``batch``
sequences each run ``query`` new tokens against a cache of ``past`` positions. ``past = 0`` is
a prefill of ``query`` tokens (``inference.prefill.time`` at T = query); ``query = 1`` a decode
step (``inference.decode.time`` at T = past); anything else a step of ``query`` tokens after
``past`` cached ones (``step.extend_step``): a speculative verification or a prefill chunk.

Speculative decoding: a draft proposes γ tokens one decode step at a time (its caches hold
T, T + 1, ..., T + γ - 1 positions), then the target verifies them in one step of γ + 1 tokens
after T cached ones. With each draft token accepted independently with probability α the
expected tokens per step are (1 - α^(γ+1)) / (1 - α) (Leviathan et al. 2023, eq. 1); the
speed-up is those tokens times the target's plain decode step over the speculative step. The
draft is another model or the target's own multi-token-prediction module (DeepSeek-V3, Sec. 2.2:
one MoE layer with its norms and projection and the shared output head), reused for each of the γ
tokens. Rejected tokens' cache entries and the draft's catch-up on the bonus token are not priced.
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from ..core.symbols import B, BW_link, BW_mem, F_peak
from ..ops.base import numel
from .inference import priced_ops
from .inference_setup import setup
from .inference_time import ALL_REDUCE
from .shortcuts import expanded, roofline_max
from .step import extend_step, generated, module_step, step

#: the new tokens of a step, symbolic (a verification of γ + 1, a prefill chunk)
K = sympy.Symbol("k_new", integer=True, positive=True)

#: the largest γ the best-γ search tries
GAMMA_MAX = 16
#: the largest batch the crossover search tries
BATCH_MAX = 2 ** 20


def _expand(e):
    """Expanded unless it holds a Min or Max (as ``inference_time`` prices each op)."""
    return e if e.has(sympy.Min, sympy.Max) else expanded(e)


class StepTimer:
    """Seconds of one step of a model under ``inference.*`` options (hardware, chips, bits,
    attention): :meth:`seconds` (batch, query, past) -> an exact Rational. ``module`` prices the
    ops under that path prefix alone (``"mtp"``: a multi-token-prediction module's draft step)."""

    def __init__(self, model, module: str | None = None, **options):
        self.model, self.module, self.options = model, module, options
        self.s = setup(model, **options)
        self.T = generated(model.arch)
        self.bind = {k: v for k, v in self.s.bindings.items() if k not in (B, self.T)}
        missing = [x.name for x in (F_peak, BW_mem) if x not in self.bind]
        if missing:
            raise SymgptError("step times need the device: give --hardware NAME (or --peak and --bandwidth)")
        if self.s.chips > 1 and BW_link not in self.bind:
            raise SymgptError("tensor parallelism needs the link bandwidth: give --link-bandwidth or a profile")
        self._exprs = {}

    def _step(self, query, prefill):
        arch = self.model.arch
        if self.module is not None:
            return module_step(arch, self.module, query)
        return step(arch, "prefill") if prefill else extend_step(arch, query)

    def expr(self, query, prefill: bool = False) -> sympy.Expr:
        """Seconds of a step, symbolic in B and T (a prefill: T prompt tokens; otherwise *query*
        new tokens after T cached; *query* may be the symbol :data:`K`, priced once for all)."""
        key = (query, prefill)
        if key not in self._exprs:
            s, arch = self.s, self.model.arch
            st = self._step(query, prefill)
            bind = self.bind  # the sizes and the device bound first: each Max then compares in B, T alone
            parts = [roofline_max(expanded(f / F_peak).xreplace(bind), _expand(b / BW_mem).xreplace(bind))
                     for _, f, b in priced_ops(s, arch, st)]
            if s.chips > 1:
                for o in st.ops:
                    if arch.role(o.node) in ALL_REDUCE:
                        size = numel(o.written) * s.act * arch.activity(o.node)
                        parts.append(2 * sympy.Rational(s.chips - 1, s.chips) * size / BW_link)
            self._exprs[key] = sympy.Add(*parts).xreplace(self.bind)
        return self._exprs[key]

    def seconds(self, batch: int, query: int, past: int) -> sympy.Rational:
        """Seconds of one step: *batch* sequences, *query* new tokens each, *past* cached."""
        for name, v, low in (("batch", batch, 1), ("query", query, 1), ("past", past, 0)):
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise SymgptError(f"{name} is an integer >= {low}, got {v!r}")
        prefill = past == 0 and self.module is None
        if prefill or query == 1:
            e = self.expr(query, prefill)
        else:  # a verification or a chunk: one formula in the number of new tokens
            e = self.expr(K).xreplace({K: sympy.Integer(query)})
        v = e.xreplace({B: sympy.Integer(batch), self.T: sympy.Integer(query if prefill else past)})
        if not v.is_Rational:
            raise SymgptError(f"the step time is not a number: {sorted(x.name for x in v.free_symbols)} unbound")
        return v


def acceptance(text) -> sympy.Rational:
    """An acceptance rate in [0, 1) from text ("0.7", "7/10") or a number, exactly."""
    from fractions import Fraction

    try:
        a = sympy.Rational(Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        raise SymgptError(f"--acceptance takes a rate in [0, 1) such as 0.7 or 7/10, got {str(text)[:40]!r}") from None
    if not 0 <= a < 1:
        raise SymgptError(f"--acceptance is a rate in [0, 1), got {text}")
    return a


def tokens_per_step(alpha, gamma: int) -> sympy.Rational:
    """(1 - α^(γ+1)) / (1 - α): expected tokens per verification (Leviathan et al. 2023, eq. 1)."""
    alpha = sympy.Rational(alpha)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


class Speculation:
    """Speculative decoding of *target* with a draft timer at acceptance *alpha*."""

    def __init__(self, target: StepTimer, draft: StepTimer, alpha):
        self.target, self.draft, self.alpha = target, draft, sympy.Rational(alpha)

    def draft_time(self, gamma, batch, past):
        return sympy.Add(*[self.draft.seconds(batch, 1, past + i) for i in range(gamma)])

    def step_time(self, gamma: int, batch: int, past: int) -> sympy.Rational:
        """γ draft decode steps + one target step of γ + 1 tokens after *past* cached."""
        return self.draft_time(gamma, batch, past) + self.target.seconds(batch, gamma + 1, past)

    def speedup(self, gamma: int, batch: int, past: int) -> sympy.Rational:
        plain = self.target.seconds(batch, 1, past)
        return tokens_per_step(self.alpha, gamma) * plain / self.step_time(gamma, batch, past)

    def best_gamma(self, batch: int, past: int, gamma_max: int = GAMMA_MAX):
        """(γ, speed-up) of the largest speed-up for γ = 1..gamma_max (the smallest γ on a tie)."""
        best = None
        for g in range(1, gamma_max + 1):
            v = self.speedup(g, batch, past)
            if best is None or v > best[1]:
                best = (g, v)
        return best

    def crossover(self, gamma: int, past: int, batch_max: int = BATCH_MAX):
        """The smallest batch at which speculation with γ tokens no longer pays (speed-up <= 1),
        by doubling then bisection (assuming the speed-up falls with the batch, as decode turns
        compute-bound); None when it pays at every batch up to *batch_max*."""
        if self.speedup(gamma, 1, past) <= 1:
            return 1
        lo, hi = 1, 2
        while self.speedup(gamma, hi, past) > 1:
            lo, hi = hi, hi * 2
            if hi > batch_max:
                return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.speedup(gamma, mid, past) > 1 else (lo, mid)
        return hi


def has_mtp(model) -> bool:
    """Whether *model* declares a multi-token-prediction module its family can build: the flag
    ``mtp_layers`` set, or a preset or config.json that names one (num_nextn_predict_layers)."""
    if "mtp_layers" not in model.flags:
        return False
    if model.flags.get("mtp_layers"):
        return True
    texts = [getattr(model.preset, "note", "") or ""] + list(model.notes)
    return any("multi-token-prediction" in t or "num_nextn_predict_layers=" in t for t in texts)


def mtp_model(model):
    """The model with its multi-token-prediction module on the graph (one module unless set),
    or a one-line refusal."""
    if not has_mtp(model):
        raise SymgptError(f"--draft mtp: {model.name} declares no multi-token-prediction module symgpt can build "
                          "(DeepSeek-V3's num_nextn_predict_layers); name a draft model instead")
    return model if model.flags.get("mtp_layers") else model.with_(mtp_layers=1)
