"""The interactive page printed from ``symgpt.documents.html.Page``: one self-contained HTML file.

The layout is ``templates/page.html`` (jinja2, autoescaped); the page's code is
``templates/page_exact.js`` (exact rationals of BigInts, printing) and ``templates/page.js``
(inputs, tables, graph, plots); the closed forms are compiled here to JavaScript
(``html_js.js_expr``) and MathML (``html_js.mathml_expr``). Nothing is fetched at view time:
styles, code, data and the compute graph's SVG are all inline. The output is deterministic.
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache

import jinja2
from markupsafe import Markup

from .dotlabels import op_text, shape_text
from .html_js import js_expr, mathml_expr
from .markup import xml_escape
from .text import group_marks

OPTION_HELP = {
    "precision": "bytes per weight, gradient, activation (mixed: fp32 master copy)",
    "optimizer": "optimizer state kept per parameter",
    "zero": "ZeRO stage: 1 shards optimizer state over dp, 2 also gradients, 3 also weights",
    "dp": "data-parallel ranks (ZeRO shards over them)",
    "tp": "tensor-parallel ranks (Megatron-LM: whole heads per rank)",
    "hardware": "device profile (datasheet peak FLOP/s in bf16, memory bandwidth) for the roofline times",
}
#: the options laid out under inference; the others are training memory's
INFERENCE_OPTIONS = ("hardware",)
TITLES = {
    "params": "parameters", "params.active": "parameters that run per token",
    "flops.forward": "forward pass, per step", "flops.backward": "backward pass, per step",
    "flops.train": "forward + backward, per step", "memory.weights": "weights, bytes per device",
    "memory.gradients": "gradients, bytes per device", "memory.optimizer": "optimizer state, bytes per device",
    "memory.activations": "activations saved for backward, bytes", "memory.total": "training memory, bytes per device",
    "memory.kv_cache": "KV cache for inference, bytes",
    "inference.prefill.time": "prefill of B prompts of T tokens, seconds (roofline, 16-bit)",
    "inference.decode.time": "one decode step over a cache of T tokens, seconds (roofline, 16-bit)",
    "inference.kv_cache": "KV cache for B sequences of T tokens, bytes (16-bit)",
    "inference.state": "recurrent state for B sequences (constant in T), bytes (16-bit conv state, fp32 SSM state)",
    "inference.decode.tokens_per_s": "decode tokens per second: B / decode step time",
    "serving.kv_budget": "bytes the KV cache may use on one device: utilization · memory − weights − workspace",
    "serving.kv_per_sequence": "bytes one sequence of T tokens holds: ⌈T / block⌉ blocks of every layer",
    "serving.max_sequences": "sequences of T tokens that fit at once: ⌊budget / bytes per sequence⌋",
}
#: the serving panel's quantities (shown there, not among the totals)
SERVING = ("serving.kv_budget", "serving.kv_per_sequence", "serving.max_sequences")
#: what the graph's op panel shows for an op, in order
OP_ROWS = (("params", "parameters"), ("flops.forward", "forward FLOPs"), ("flops.train", "training FLOPs"),
           ("memory.activations", "bytes saved for backward"))
CROSSOVER = "crossover.T"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    from .latex import template_dir

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir())), autoescape=True,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def _raw(name: str) -> str:
    from .latex import template_dir

    return (template_dir() / name).read_text(encoding="utf-8")


def page_html(p) -> str:
    """The page's HTML text."""
    from ..version import __version__

    quantities = [dict(q) for q in p.quantities]
    cx = p.plots["crossover"]  # None: the model has no one sequence length T to plot against
    if cx is not None and cx["solution"] is not None:
        quantities.append({"name": CROSSOVER, "unit": "tokens", "reads": [],
                           "variants": [{"total": cx["solution"], "parts": []}], "pick": {"": 0}})
    shown = {i for q in quantities for v in q["variants"] for i in [v["total"], *(j for _, j in v["parts"])]}
    shown |= {j for _, j in p.plots["shares"]}
    data = {
        "quantities": [{k: q[k] for k in ("name", "unit", "reads", "variants", "pick")} for q in quantities],
        "ops": [_op(p, o) for o in p.ops],
        "constraints": p.constraints,
        "plots": {"crossover": {k: cx[k] for k in ("fast", "slow", "solution")} if cx is not None else None,
                  "shares": p.plots["shares"], "memory": p.plots["memory"]},
        "op_rows": [{"quantity": q, "title": t} for q, t in OP_ROWS],
        "hardware": {n: h["values"] for n, h in p.hardware.items()} if p.hardware else None,
        "mathml": [mathml_expr(e) if i in shown else None for i, e in enumerate(p.exprs.items)],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    exprs = ",\n".join(f"(s)=>{js_expr(e)}" for e in p.exprs.items)
    m, conv = p.model, p.convention
    ctx = dict(
        version=__version__, name=m.name, family=f"{m.family.name} family",
        notes=[n for n in p.notes if n],
        convention=conv.name, convention_summary=conv.summary, convention_source=conv.source,
        symbols=p.symbols,
        options=[{**o, "help": OPTION_HELP[o["name"]]} for o in p.options if o["name"] not in INFERENCE_OPTIONS],
        inference_options=[{**o, "help": OPTION_HELP[o["name"]],
                            "titles": {n: h["title"] for n, h in (p.hardware or {}).items()}}
                           for o in p.options if o["name"] in INFERENCE_OPTIONS],
        summary=[{"name": q["name"], "title": TITLES.get(q["name"], q["unit"])} for q in p.quantities
                 if q["name"] not in SERVING],
        serving=None if getattr(p, "serving", None) is None else {
            **p.serving, "rows": [{"name": n, "title": TITLES[n]} for n in SERVING]},
        per_note="FLOPs are per step (B sequences of T tokens); memory is per device under the options "
                 "above; parts under blocks/ total all L layers. Inference times are roofline times on one "
                 "device of the profile chosen: each op takes max(FLOPs / F_peak, bytes / BW_mem).",
        svg=Markup(interactive_svg(p.svg, {o["path"]: o["label"] for o in p.ops})),
        crossover={"fast_label": cx["fast_label"], "slow_label": cx["slow_label"], "notes": cx["notes"],
                   "has_solution": cx["solution"] is not None} if cx is not None else None,
        tables=_tables(p),
        css=Markup(_raw("page.css")), exact_js=Markup(_raw("page_exact.js")), page_js=Markup(_raw("page.js")),
        exprs_js=Markup(exprs), data=Markup(text),
    )
    return _env().get_template("page.html").render(**ctx)


def _shape(p, dims) -> dict:
    return {"dims": dims, "text": shape_text(tuple(p.exprs.items[i] for i in dims))}


def _op(p, o) -> dict:
    return {"path": o["path"], "label": o["label"], "describe": op_text(o["op"], {}),
            "repeat": group_marks(p.free.arch, o["group"]),
            "inputs": [_shape(p, s) for s in o["inputs"]], "output": _shape(p, o["output"])}


def _rows(p, name) -> list[dict]:
    paths: list[str] = []
    for q in p.quantities:
        if q["name"] == name:
            for v in q["variants"]:
                paths += [path for path, _ in v["parts"] if path not in paths]
    return [{"path": path} for path in paths]


def _tables(p) -> list[dict]:
    col = lambda q, t: {"quantity": q, "title": t}  # noqa: E731
    return [
        {"id": "params-table", "title": "Parameters by part", "formula_of": "params", "share_of": "params",
         "columns": [col("params", "parameters")], "rows": _rows(p, "params"),
         "note": "Tied weights are counted once, at the op that owns them."},
        {"id": "flops-table", "title": "FLOPs by part", "formula_of": "flops.train", "share_of": "flops.train",
         "columns": [col("flops.forward", "forward"), col("flops.backward", "backward"), col("flops.train", "train")],
         "rows": _rows(p, "flops.train"), "note": "Per step; the formula is the training FLOPs."},
        {"id": "memory-table", "title": "Training memory by kind", "formula_of": "memory.total",
         "share_of": "memory.total", "columns": [col("memory.total", "bytes")], "rows": _rows(p, "memory.total"),
         "note": "Per device, under the precision, optimizer, ZeRO stage, dp and tp above."},
        {"id": "activations-table", "title": "Activations saved for backward, by the op that saves them",
         "formula_of": "memory.activations", "share_of": "memory.activations",
         "columns": [col("memory.activations", "bytes")], "rows": _rows(p, "memory.activations"),
         "note": "Each saved tensor is counted once, at the first op that saves it."},
    ]


_NODE = re.compile(r'<g id="(node\d+)" class="node">\s*<title>([^<]*)</title>')


def interactive_svg(svg: str, ops: dict[str, str]) -> str:
    """Graphviz's SVG made part of the page: no XML prolog, scalable, and every op node focusable
    (``tabindex``), labelled, and marked with ``data-op`` (its path)."""
    svg = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->", "", svg, flags=re.S).strip()
    svg = re.sub(r'<svg width="[^"]*" height="[^"]*"', '<svg role="group" aria-label="compute graph"', svg, count=1)

    def mark(m):
        path = html.unescape(m.group(2))
        if path not in ops:
            return m.group(0)
        attrs = (f' tabindex="0" role="button" aria-pressed="false" data-op="{xml_escape(path)}"'
                 f' aria-label="{xml_escape(ops[path])} ({xml_escape(path)})"')
        return f'<g id="{m.group(1)}" class="node"{attrs}>\n<title>{m.group(2)}</title>'

    return _NODE.sub(mark, svg)
