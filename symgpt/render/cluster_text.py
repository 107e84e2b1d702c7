"""Text for ``symgpt comm`` (bytes per device per step, by dimension and collective) and
``symgpt plan`` (the ranked strategies)."""

from __future__ import annotations

from .costs_text import part_value
from .report_text import model_header
from .text import expr_text, number, table
from .units import bytes_in, bytes_text, scaled


def comm_text(m, qs, hint: str = "") -> str:
    lines = [model_header(m), ""]
    rows = [[q.name, expr_text(q.expr), number(q.value),
             bytes_text(q.value).split(" = ", 1)[-1] if q.value is not None else "-"] for q in qs]
    lines.append(table(["quantity", "formula (bytes sent per device per step)", "bytes", "GB (10⁹) / GiB (2³⁰)"],
                       rows, "llrr"))
    total = qs[-1]
    lines += ["", "by collective"]
    rows = [[p, expr_text(e), number(part_value(total, e)), scaled(part_value(total, e))] for p, e in total.breakdown]
    lines.append(table(["collective", "formula", "bytes", "decimal"], rows, "llrr"))
    lines += [f"note: {n}" for n in total.notes]
    if hint:
        lines.append(hint)
    return "\n".join(lines)


def _gb(v) -> str:
    return bytes_in(v, "GB", ".2f")


def plan_text(m, result, top: int) -> str:
    lines = [model_header(m), "",
             f"{result.devices} devices, global batch {result.global_batch} sequences of T = {result.T}; "
             f"{result.considered:,} strategies priced, {result.fitting:,} fit in {_gb(result.memory_limit)} GB; "
             f"the best {min(top, len(result.rows))} by step time", ""]
    rows = []
    for i, r in enumerate(result.rows[:top], 1):
        rows.append([str(i), str(r["tp"]), str(r["pp"]), str(r["vp"]), str(r["dp"]), str(r["cp"]), str(r["ep"]),
                     str(r["microbatch"]), str(r["microbatches"]), r["recompute"], str(r["zero"]),
                     "yes" if r["sp"] else "no", _gb(r["memory"]), bytes_in(r["comm_bytes"], "GB", ".3g"),
                     f"{float(r['bubble']) * 100:.1f}", f"{float(r['time']):.4g}", f"{float(r['mfu']) * 100:.1f}"])
    head = ["#", "tp", "pp", "vp", "dp", "cp", "ep", "b", "m", "recompute", "zero", "sp",
            "memory GB", "comm GB", "bubble %", "step s", "MFU %"]
    if getattr(result, "schedules", ("1f1b",)) != ("1f1b",):   # the schedule searched, beside vp
        head.insert(4, "schedule")
        for row, r in zip(rows, result.rows):
            row.insert(4, r["schedule"])
        lines.append(table(head, rows, "r" * 4 + "l" + "r" * 5 + "lrl" + "r" * 5))
    else:
        lines.append(table(head, rows, "r" * 9 + "lrl" + "r" * 5))
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def _time_value(q) -> str:
    from .costs_text import seconds_text

    v = q.value
    if v is None:
        return "(symbolic)"
    if q.unit == "s":
        return seconds_text(v)
    if q.unit == "device-hours":
        return f"{float(v):,.6g} device-hours"
    return f"{float(v) * 100:.4g} %"


def cluster_time_text(m, qs, hint: str = "") -> str:
    lines = [model_header(m), ""]
    rows = []
    for q in qs:
        parts = ", ".join(f"{p} {_time_value(type(q)(q.name, ((p, e),), q.bindings, q.unit))}"
                          for p, e in q.grouped(1)) if len(q.grouped(1)) > 1 else ""
        rows.append([q.name, _time_value(q), parts])
    lines.append(table(["quantity", "value", "by part"], rows, "lrl"))
    lines += ["", "formulas (seconds; exact):"]
    lines += [f"  {q.name} = {expr_text(q.expr)}" for q in qs if q.unit == "s"]
    lines += [f"note: {n}" for n in qs[3].notes]
    for q in qs:
        lines.append(f"note: {q.name}: {q.notes[0].split(';')[0]}")
    if hint:
        lines.append(hint)
    return "\n".join(lines)


_MACHINE = (("peak", "peak", "FLOP/s"), ("device_memory", "device memory", "bytes"),
            ("link_bandwidth", "link inside a node", "bytes/s per device per direction"),
            ("node_bandwidth", "network between nodes", "bytes/s per device per direction"),
            ("node_size", "devices per node", ""),
            ("low_peak", "peak of the precision's low-precision GEMMs", "FLOP/s"))


def machine_text(values: dict, sources: dict, profile, dtype: str, memory=None) -> str:
    """The machine's numbers, each with where it came from (a flag, or the profile's datasheet),
    and the memory per device against the device's ('' when no number was given)."""
    from .text import sci

    if not values:
        return ""
    lines = [""]
    if profile is not None:
        lines.append(f"hardware {profile.name} ({profile.title}); datasheet: {profile.source}")
    for key, what, unit in _MACHINE:
        if key not in values:
            continue
        v, src = values[key], sources[key]
        shown = str(v) if key == "node_size" else f"{sci(v)} {unit}"
        if key == "peak" and src != "--peak":
            shown += f" (dense {dtype}, the precision's matmul dtype)"
        if key == "device_memory" and profile is not None and src != "--device-memory":
            shown += f" ({profile.memory_unit} as the datasheet states it)"
        lines.append(f"  {what}: {shown}  [{'given ' + src if src.startswith('--') else src + ' datasheet'}]")
    if memory is not None and memory.value is not None and "device_memory" in values:
        cap = values["device_memory"]
        verdict = "fits" if memory.value <= cap else "does not fit"
        lines.append(f"memory per device: memory.total = {bytes_text(memory.value)} of {sci(cap)} bytes: {verdict} "
                     f"({float(memory.value / cap) * 100:.1f} %)")
    return "\n".join(lines)


def _megatron_mb(v) -> str:
    """Megatron-LM's "MB": 2²⁰ bytes (MiB), two decimals, as it prints it."""
    return bytes_in(v, "MiB", ".2f", missing="(symbolic)")


def megatron_text(m, mega, qs) -> str:
    """Megatron-LM's start-up line, and the exact derivation's figures in the same units."""
    vals = {p: m.value(e) for p, e in mega.breakdown}
    w = vals.get("weight and optimizer")
    line = f"Theoretical memory footprints: weight and optimizer={_megatron_mb(w)} MB"
    if "activation" in vals:
        a = vals["activation"]
        total = None if w is None or a is None else w + a
        line += f", activation={_megatron_mb(a)} MB, total={_megatron_mb(total)} MB"
    by = {q.name: q.value for q in qs}
    states = [by.get(n) for n in ("memory.weights", "memory.gradients", "memory.optimizer")]
    exact_w = None if any(v is None for v in states) else sum(states)
    return "\n".join(["", "Megatron-LM's theoretical estimate (MB = 2^20 bytes), as it prints it:", "  " + line,
                      "the exact derivation above, in the same units: weight and optimizer="
                      f"{_megatron_mb(exact_w)} MB, activation={_megatron_mb(by.get('memory.activations'))} MB, "
                      f"total={_megatron_mb(by.get('memory.total'))} MB"] + [f"note: {n}" for n in mega.notes])


def optimal_text(f, qs) -> str:
    import sympy

    lines = [f"fit {f.name}: {f.describe()}  [{f.source}]", ""]
    rows = []
    for q in qs:
        v = q.expr
        shown = f"{float(v):.6g}" if q.unit != "" else f"{float(v) * 100:+.3f} %"
        exact = str(v) if isinstance(v, sympy.Rational) and q.unit in ("tokens", "FLOPs") else ""
        rows.append([q.name, shown, q.unit or "ratio", exact])
    lines.append(table(["quantity", "value", "unit", "exact"], rows, "lrll"))
    seen = []
    for q in qs:
        seen += [n for n in q.notes if n not in seen]
    lines += [f"note: {n}" for n in seen]
    return "\n".join(lines)
