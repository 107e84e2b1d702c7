"""Continuous batching in steady state, in closed form (exact SymPy numbers and expressions).

For a request mix served at saturation (a queue that never empties), every request of P prompt
and G output tokens:

* the saturating batch: the sequences that run at once, min(max batch, floor(KV blocks /
  ceil((P + G - 1) / block size))) -- each request holding its cache's blocks at its longest;
* decode throughput vs batch: B / ``inference.decode.time`` at that B, tokens per second of one
  decode step of B sequences whose caches hold T tokens (a piecewise-linear roofline in B);
* the knee: ``inference.critical_batch``, the B at which a decode step turns compute-bound;
* the saturating throughput of prefill-first scheduling: a cycle of one prefill of B prompts and
  G - 1 decode steps yields B·G tokens, which is ``inference.tokens_per_s`` at B (requests in
  lock-step: a burst of identical requests runs exactly so).
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError
from ..core.symbols import as_expr


def saturating_batch(max_batch: int, prompt: int, output: int, capacity_blocks: int | None = None,
                     block_size: int = 16) -> sympy.Integer:
    """The sequences that run at once at saturation (exact)."""
    if capacity_blocks is None:
        return sympy.Integer(max_batch)
    per = -(-(prompt + output - 1) // block_size)
    fit = capacity_blocks // per
    if fit < 1:
        raise SymgptError(f"one request of {prompt} + {output} tokens needs {per} KV blocks; the capacity is "
                          f"{capacity_blocks}")
    return sympy.Integer(min(max_batch, fit))


def decode_throughput(model, context: int, **options):
    """Tokens/s of a decode step as an exact expression in B (the caches hold *context* tokens)."""
    from ..core.symbols import B

    m = _free_batch(model).with_(T=context)
    q = m.quantity("inference.decode.time", **options)
    return B / q.expr.xreplace({k: v for k, v in q.bindings.items() if k != B})


def knee_batch(model, context: int, **options):
    """``inference.critical_batch`` at caches of *context* tokens: (exact value, its notes)."""
    q = _free_batch(model).with_(T=context).quantity("inference.critical_batch", **options)
    return q.value, q.notes


def saturating_throughput(model, batch: int, prompt: int, output: int, **options):
    """Output tokens/s of prefill-first at a batch of *batch* in lock-step (exact)."""
    m = _free_batch(model).with_(B=batch)
    return m.quantity("inference.tokens_per_s", prompt=prompt, generate=output, **options).value


def _free_batch(model):
    names = [k for k in ("B", "T") if k in model.sizes]
    return model.free(*names) if names else model


def steady(model, prompt: int, output: int, max_batch: int, capacity_blocks=None, block_size=16,
           **options) -> dict:
    """The closed forms at a mix of *prompt* and *output* tokens, JSON-ready (exact values as
    text, with a float beside them)."""
    from ..core.symbols import B

    batch = saturating_batch(max_batch, prompt, output, capacity_blocks, block_size)
    context = prompt + max(output - 2, 0) // 2
    rate = decode_throughput(model, context, **options)
    out = {"saturating_batch": _entry(batch),
           "decode_tokens_per_s": {"value": str(rate), "at_saturating_batch": _entry(rate.subs(B, batch))["value"],
                                   "approx": float(rate.subs(B, batch)), "context": context},
           "saturating_tokens_per_s": _entry(saturating_throughput(model, int(batch), prompt, output, **options))}
    notes = [f"steady state at P = {prompt} prompt and G = {output} output tokens per request, saturated"
             f" (a queue that never empties); the decode rate and the knee at caches of {context} tokens "
             "(the mean decode step's)",
             "saturating_tokens_per_s: prefill-first in lock-step, one prefill of B prompts and G - 1 decode "
             "steps per B·G tokens (inference.tokens_per_s at the saturating batch)"]
    try:
        value, knee_notes = knee_batch(model, context, **options)
        out["knee_batch"] = _entry(value)
        notes += [f"knee_batch: {n}" for n in knee_notes if "not positive" in n]
    except SymgptError as e:
        notes.append(f"knee_batch: {e}")
    out["notes"] = notes
    return out


def _entry(v) -> dict:
    v = as_expr(v)
    return {"value": str(v), "approx": float(v) if v.is_number else None}
