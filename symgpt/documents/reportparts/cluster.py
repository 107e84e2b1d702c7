"""Report part: training on a cluster -- the pipeline schedules (SVG and TikZ), per-device memory
across strategies (a stacked bar, SVG), and the tables of memory, communication and step time
(Markdown and JSON), from :func:`symgpt.documents.cluster.figures`."""

from __future__ import annotations

from ...core.io import write_atomic

FOLDER = "cluster"


def write(model, folder, **options) -> list[str]:
    from ...derive.comm import COLLECTIVES
    from ...render.cluster_fig import memory_bars_svg, schedule_svg, schedule_tikz
    from ...render.cluster_md import Training, cluster_md
    from ...render.jsonout import dumps, model_json
    from ..cluster import DEVICES, OPTIMIZER, PRECISION, figures, summary

    f = figures(model)
    rows = summary(f)
    files = []

    def put(name, text):
        write_atomic(folder / FOLDER / name, text)
        files.append(f"{FOLDER}/{name}")

    for s in f.schedules:
        stem = "schedule-interleaved" if s.v > 1 else "schedule-1f1b"
        title = f"{s.title}: p = {s.p}, m = {s.m}" + (f", v = {s.v}" if s.v > 1 else "") + \
            f"; bubble {s.bubble} of the compute (papers' {s.formula} = {s.paper})"
        put(f"{stem}.svg", schedule_svg(s.slots, title))
        put(f"{stem}.tex", schedule_tikz(s.slots, title))
    if rows and all(r["memory_total"] is not None for r in rows):
        put("memory.svg", memory_bars_svg([{"parts": r["memory"]} for r in rows],
                                          f"{model.name} on {DEVICES} devices: memory per device ({PRECISION}, {OPTIMIZER})",
                                          labels=[r["short"] for r in rows], footer="strategies in the order of cluster.md"))
    kinds = [k for k in COLLECTIVES if any(k in r["comm"] for r in rows)]
    convention = f.rows[0].total.notes[-1] if f.rows else ""
    schedules = [(s.title, s.p, s.m, s.v, s.bubble, s.formula, s.paper) for s in f.schedules]
    put("cluster.md", cluster_md(model, schedules, rows, kinds, f.hardware, f.machine,
                                 Training(PRECISION, OPTIMIZER, convention)))
    text = lambda v: None if v is None else str(v)  # noqa: E731  (exact numbers as text)
    put("cluster.json", dumps({
        **model_json(model), "precision": PRECISION, "optimizer": OPTIMIZER, "devices": DEVICES,
        "convention": convention,
        "hardware": {"name": f.hardware.name, "source": f.hardware.source,
                     **{k: text(v) for k, v in f.machine.items()}},
        "schedules": [{"schedule": s.title, "p": s.p, "m": s.m, "v": s.v, "bubble": str(s.bubble),
                       "formula": s.formula, "paper": str(s.paper)} for s in f.schedules],
        "strategies": [{"name": r["name"], "options": {k: v for k, v in r["options"].items()},
                        "memory": {k: text(v) for k, v in r["memory"].items()}, "memory_total": text(r["memory_total"]),
                        "comm": {k: text(v) for k, v in r["comm"].items()}, "comm_total": text(r["comm_total"]),
                        "zero_volume": text(r["zero_volume"]), "time": {k: text(v) for k, v in r["time"].items()},
                        "step": text(r["step"]), "sequences": text(r["sequences"])} for r in rows],
        "skipped": [{"name": n, "why": why} for n, why in f.skipped]}))
    return files
