"""Markdown for the costs part of the report: FLOPs, memory and time. Printers format; never count."""

from __future__ import annotations

from .markdown import md_escape, md_table, sizes_line, stacks_line
from .text import expr_text, number, sci
from .units import bytes_in


def _code(s: str) -> str:
    return "`" + s.replace("`", "'") + "`"


def _share(v, total) -> str:
    return f"{100 * float(v) / float(total):.2f} %" if (v is not None and total) else ""


def flops_md(model, qs, by_convention) -> str:
    """*qs*: forward, backward, train under one convention; *by_convention*: [(conv, fwd, train)]."""
    fwd, bwd, train = qs
    lines = [f"# FLOPs of {md_escape(model.name)}", "", sizes_line(model), "",
             f"Convention `{train.convention}`. " + md_escape(train.notes[0]), ""]
    rows = [[q.name, _code(expr_text(q.expr)), number(q.value), sci(q.value)] for q in qs]
    lines += [md_table(["quantity", "formula", "FLOPs", "≈"], rows, "llrr"), "", "## By op", ""]
    values = {q.name: q.values() for q in qs}
    rows = []
    for p in train.paths():
        v = values["flops.train"][p]
        rows.append([_code(p), _code(expr_text(train[p])),
                     *[number(values[q.name].get(p, 0)) for q in qs], _share(v, train.value)])
    lines += [md_table(["op", "train formula", "forward", "backward", "train", "share"], rows, "llrrrr"), "",
              stacks_line(model, "Paths under {path} total all {count} layers."), "", "## Every convention", ""]
    rows = [[_code(c.name), md_escape(c.source), _code(expr_text(t.expr)), number(f.value), number(t.value), c.per]
            for c, f, t in by_convention]
    lines += [md_table(["convention", "source", "training formula", "forward", "train", "per"], rows, "lllrrl"), ""]
    lines += [f"- {md_escape(n)}" for n in model.notes]
    return "\n".join(lines).rstrip() + "\n"


#: what inference.state holds (the conv and SSM / delta-rule states), unless the caller says otherwise
_STATE_TEXT = ("the recurrent layers' conv state (at this policy's width) and SSM / delta-rule state (fp32) for "
               "B sequences, constant in T (transformers' LinearAttentionLayer)")


def memory_md(model, policies, estimate, state_text: str | None = None) -> str:
    """*policies*: [(title, [quantities], activations quantity)]; *estimate*: the three-term estimate;
    *state_text*: what ``inference.state`` holds, where not the conv and SSM / delta-rule states."""
    lines = [f"# Memory of {md_escape(model.name)}", "", sizes_line(model), "",
             "Bytes are exact. GB = 10⁹ bytes, GiB = 2³⁰ bytes.", ""]
    for title, qs, acts in policies:
        lines += [f"## {md_escape(title)}", "", md_escape(qs[-1].notes[0]), ""]
        rows = [[q.name, _code(expr_text(q.expr)), number(q.value),
                 bytes_in(q.value, "GB", ".3f"), bytes_in(q.value, "GiB", ".3f")] for q in qs]
        lines += [md_table(["quantity", "formula (bytes)", "bytes", "GB", "GiB"], rows, "llrrr"), ""]
        state = [q for q in qs if q.name == "inference.state"]
        if state:  # a model with recurrent layers: what its KV cache leaves out
            lines += [md_escape(f"memory.kv_cache holds the attention layers' keys and values only; inference.state "
                                f"is {state_text or _STATE_TEXT}; neither is part of memory.total (training)"), ""]
        lines += ["Activations saved for backward, by the op that saves them:", ""]
        vals = acts.values()
        rows = [[_code(p), _code(expr_text(e)), number(vals[p]), _share(vals[p], acts.value)]
                for p, e in acts.breakdown]
        lines += [md_table(["op", "formula (bytes)", "bytes", "share"], rows, "llrr"), ""]
    if estimate is not None:
        vals = estimate.values()
        rows = [[_code(p), _code(expr_text(e)), number(vals[p])] for p, e in estimate.breakdown]
        rows.append(["sum", _code(expr_text(estimate.expr)), number(estimate.value)])
        lines += ["## The textbook estimate: three named terms", "", md_escape(estimate.notes[0]), "",
                  md_table(["term", "formula (bytes)", "bytes"], rows, "llr"), ""]
    return "\n".join(lines).rstrip() + "\n"


def time_md(model, rows_in) -> str:
    """*rows_in*: [(label, value text, formula)]."""
    lines = [f"# Time of {md_escape(model.name)}", "", sizes_line(model), ""]
    rows = [[md_escape(a), b, md_escape(c)] for a, b, c in rows_in]
    lines += [md_table(["figure", "value", "how"], rows, "lrl"), ""]
    return "\n".join(lines)
