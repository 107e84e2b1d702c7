"""Report part: FLOPs under every convention, memory under two precision policies, time."""

from __future__ import annotations

import sympy

from ...core.io import write_atomic
from ...render.jsonout import dumps, model_json, quantity_json

PEAK = sympy.Integer(300) * 10**12  # the A100 figure
POLICIES = (("fp32, AdamW", dict(precision="fp32", optimizer="adamw")),
            ("mixed bf16 (fp32 master), AdamW", dict(precision="mixed-bf16", optimizer="adamw")))
MEMORY = ("memory.weights", "memory.gradients", "memory.optimizer", "memory.activations",
          "memory.logits", "memory.kv_cache", "memory.total")


def write(model, folder, **options) -> list[str]:
    from ...core.conventions import CONVENTIONS
    from ...derive.memory import three_term_estimate
    from ...render.costs_md import flops_md, memory_md, time_md
    from ...render.text import sci

    flops = [model.quantity(n) for n in ("flops.forward", "flops.backward", "flops.train")]
    by_conv = [(c, model.quantity("flops.forward", convention=c.name), model.quantity("flops.train", convention=c.name))
               for c in CONVENTIONS.values()]
    payload = {**model_json(model), "convention": flops[-1].convention,
               **{q.name: quantity_json(q) for q in flops},
               "conventions": {c.name: {"source": c.source, "summary": c.summary, "choices": c.choices(),
                                        "flops.forward": quantity_json(f), "flops.train": quantity_json(t)}
                               for c, f, t in by_conv}}
    write_atomic(folder / "flops.json", dumps(payload))
    write_atomic(folder / "flops.md", flops_md(model, flops, by_conv))

    from ...derive.recurrent import recurrent_ops

    policies, mem = [], {}
    for title, opts in POLICIES:
        qs = [model.quantity(n, **opts) for n in MEMORY]
        if recurrent_ops(model.arch):  # the recurrent layers' state, at the policy's activation width
            bits = 32 if opts["precision"] == "fp32" else 16
            qs.insert(-1, model.quantity("inference.state", kv_bits=bits))
        policies.append((title, qs, qs[3]))
        mem[opts["precision"]] = {"options": opts, **{q.name: quantity_json(q) for q in qs}}
    estimate = three_term_estimate(model, "mixed-fp16") if model.family.name == "gpt2" else None
    mem_payload = {**model_json(model), "convention": policies[0][1][0].convention, "policies": mem}
    if estimate is not None:
        mem_payload["three_term_estimate"] = quantity_json(estimate)
    write_atomic(folder / "memory.json", dumps(mem_payload))
    from ...derive.recurrent import STATE_NOTE, state_notes

    own = state_notes(model.arch)[1:] if recurrent_ops(model.arch) and state_notes(model.arch) != (STATE_NOTE,) else ()
    state_text = f"every recurrent layer's state for B sequences, constant in T ({'; '.join(own)})" if own else None
    write_atomic(folder / "memory.md", memory_md(model, policies, estimate, state_text))

    rows = []
    for mfu in (sympy.Integer(1), sympy.Rational(2, 5)):
        step = model.quantity("time.step", peak=PEAK, mfu=mfu)
        tq = model.quantity("time.throughput", peak=PEAK, mfu=mfu)
        rows.append((f"step time at MFU {100 * float(mfu):.4g} %", _shown(step, lambda v: f"{float(v) * 1000:,.2f} ms", "s"),
                     f"flops.train / ({sci(PEAK)} FLOP/s · MFU)"))
        rows.append((f"throughput at MFU {100 * float(mfu):.4g} %", _shown(tq, lambda v: f"{float(v):,.0f} tokens/s",
                                                                   "tokens/s"),
                     tq.notes[0].split(" = ", 1)[-1]))  # B·T (B·(T_enc + T_dec)) / step time
    loss = model.quantity("loss.initial")
    if loss.expr != 0:  # a vocabulary to be uniform over (ViT's classifier has none)
        rows.append(("initial loss", _shown(loss, lambda v: f"{float(v):.4f} nats", "nats"),
                     f"ln V = {loss.value}" if loss.value is not None else "ln V"))
    write_atomic(folder / "time.md", time_md(model, rows))
    return ["flops.json", "flops.md", "memory.json", "memory.md", "time.md"]


def _shown(q, fmt, unit: str) -> str:
    """A value in its unit where every size is bound; else the formula (a family name leaves
    sizes symbolic: ``symgpt report gpt2 --set T=2048``)."""
    from ...core.numtext import expr_text

    return fmt(q.value) if q.value is not None else f"{expr_text(q.expr.subs(q.bindings))} {unit}"
