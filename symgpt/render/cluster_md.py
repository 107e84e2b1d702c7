"""Markdown for the cluster part of the report: the pipeline bubbles, per-device memory, bytes
sent by collective and the step time of each strategy. Printers format; never count."""

from __future__ import annotations

from dataclasses import dataclass

from .markdown import md_escape, md_table, sizes_line
from .text import sci
from .units import bytes_in


def _gb(v) -> str:
    return bytes_in(v, "GB", ".3f")


def _mb(v) -> str:
    return bytes_in(v, "MB", ",.1f")


def _ms(v) -> str:
    return "-" if v is None else f"{float(v) * 1000:.4g}"


@dataclass(frozen=True)
class Training:
    """What the cluster page says every strategy trains with: the precision policy, the optimizer
    and the counting convention's note."""

    precision: str
    optimizer: str
    convention: str


def cluster_md(model, schedules, rows, kinds, hardware, machine, training: Training) -> str:
    """*schedules*: [(title, p, m, v, bubble, formula, paper)]; *rows*: the strategies' numbers
    (``documents.cluster.summary``); *kinds*: the collectives shown; *hardware*: its profile."""
    precision, optimizer, convention = training.precision, training.optimizer, training.convention
    lines = [f"# Training {md_escape(model.name)} on a cluster", "", sizes_line(model), "",
             f"Precision `{precision}`, optimizer `{optimizer}`; {md_escape(convention)}.", "",
             "## Pipeline schedules", "",
             "Forward 1 time unit, backward 2 (a chunk of the interleaved schedule 1/v of that); the bubble is "
             "a device's idle time over its busy time in the run of the schedule "
             "(`schedule-*.svg`, `schedule-*.tex` for TikZ).", ""]
    srows = [[t, str(p), str(m), str(v), str(b), f"{f} = {paper}", "equal" if b == paper else "differs"]
             for t, p, m, v, b, f, paper in schedules]
    lines += [md_table(["schedule", "p", "m", "v", "bubble (run)", "paper's formula", ""], srows, "lrrrrll"), ""]
    lines += ["## Memory per device (GB = 10⁹ bytes)", "",
              "Weights, gradients, optimizer states and saved activations of one device (of a pipeline, its busier stage: the first holds the most micro-batches in flight, the last the head); "
              "states in bytes per parameter Ψ where they are a multiple of it: ZeRO's (2 + 2 + K)Ψ with K = 12 "
              "(Rajbhandari et al. 2019), sharded over the data-parallel ranks by stage (`memory.svg`).", ""]
    mrows = [[md_escape(r["name"]), " + ".join(map(str, r["per_param"])) if r["per_param"] else "-",
              *[_gb(v) for v in r["memory"].values()], _gb(r["memory_total"])] for r in rows]
    lines += [md_table(["strategy", "states per Ψ", "weights", "gradients", "optimizer", "activations", "total"],
                       mrows, "llrrrrr"), ""]
    lines += ["## Bytes sent per device per step, by collective (MB = 10⁶ bytes)", "",
              "Ring collectives over n ranks: all-reduce 2(n − 1)/n · S, all-gather and reduce-scatter (n − 1)/n · S; "
              "pipeline activations and gradients point to point. DP volume: the data-parallel bytes over "
              "(n − 1)/n · Ψ elements (the ZeRO paper's 2Ψ, and 3Ψ for ZeRO-3).", ""]
    crows = [[md_escape(r["name"]), *[_mb(r["comm"].get(k)) for k in kinds], _mb(r["comm_total"]),
              str(r["zero_volume"]) if r["zero_volume"] is not None else "-"] for r in rows]
    lines += [md_table(["strategy", *kinds, "total", "DP volume / ((n − 1)/n · Ψ)"], crows, "l" + "r" * (len(kinds) + 2)),
              ""]
    lines += [f"## Step time on {md_escape(hardware.title)} (ms)", "",
              f"Compute: this device's FLOPs (recomputation counted) / (peak {sci(machine['peak'])} FLOP/s dense bf16 "
              f"· efficiency {machine['efficiency']}); communication: bytes / {sci(machine['link_bandwidth'])} bytes/s "
              f"inside a node of {machine['node_size']}, else {sci(machine['node_bandwidth'])} bytes/s, nothing "
              "overlapped; bubble (p − 1)/(v·m) of the compute; of a pipeline, its slower stage (a step ends with it; "
              "the bytes sent above are that stage's too). Datasheet: " + md_escape(hardware.source) + ".", ""]
    trows = [[md_escape(r["name"]), str(r["sequences"]), *[_ms(v) for v in r["time"].values()], _ms(r["step"])]
             for r in rows]
    lines += [md_table(["strategy", "sequences per step", "compute", "communication", "bubble", "step"], trows,
                       "lrrrrr"), ""]
    return "\n".join(lines)
