"""The report's cluster figures (``symgpt.documents.cluster``, the LaTeX section ``cluster``, the
report part ``cluster/``): their numbers are the engine's quantities and equal the papers'
formulas worked out by hand here; the LaTeX compiles and says them; the SVGs render.

Oracles: the ZeRO paper (Rajbhandari et al. 2019): per-device states (2 + 2 + K)Ψ with K = 12,
sharded by stage over N_d ranks (Fig. 1), and the data-parallel volume 2Ψ (DP, ZeRO-1/2) and 3Ψ
(ZeRO-3) per rank at large N_d, (N_d − 1)/N_d of that on a ring; the bubble fractions (p − 1)/m
(GPipe, 1F1B) and (p − 1)/(v·m) (interleaved; Narayanan et al. 2021); the NVIDIA H100 SXM
datasheet's figures typed in; GPT-2 small's 124,439,808 parameters (Radford et al. 2019)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
import sympy

import helpers
import symgpt
from symgpt.documents.cluster import MEMORY, figures, split, summary
from symgpt.documents.latex_doc import document
from symgpt.documents.report import report_model, write_report

PSI = 124_439_808       # GPT-2 small's parameters
NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def model():
    return report_model(symgpt.load("gpt2-small"))


@pytest.fixture(scope="module")
def rows(model):
    return {r["name"]: r for r in summary(figures(model))}


def test_example_split_divides_the_layers(model):
    """L = 12 over p = 4 stages: 3 layers each; v = 2 leaves 1.5 per chunk, v = 3 one."""
    assert split(model) == (4, 8, 3)
    assert split(report_model(symgpt.load("gpt2-medium"))) == (4, 8, 2)   # L = 24: 3 layers per chunk


def test_bubbles_are_the_papers(model):
    got = {s.title: (s.bubble, s.paper) for s in figures(model).schedules}
    assert got == {"1F1B": (sympy.Rational(3, 8),) * 2,             # (4 − 1)/8
                   "interleaved 1F1B": (sympy.Rational(1, 8),) * 2}  # (4 − 1)/(3·8)


def test_zero_states_per_parameter_are_the_papers(model, rows):
    """(2 + 2 + K)Ψ, K = 12, N_d = 8: ZeRO-1 shards K, ZeRO-2 also the gradients, ZeRO-3 all."""
    R = sympy.Rational
    assert rows["DP 8"]["per_param"] == [2, 2, 12]
    assert rows["DP 8, ZeRO-1"]["per_param"] == [2, 2, R(12, 8)]
    assert rows["DP 8, ZeRO-2"]["per_param"] == [2, R(2, 8), R(12, 8)]
    assert rows["DP 8, ZeRO-3"]["per_param"] == [R(2, 8), R(2, 8), R(12, 8)]
    for name, per in (("DP 8", 16), ("DP 8, ZeRO-3", 2)):
        assert sum(rows[name]["memory"][p] for p in MEMORY[:3]) == per * PSI


def test_data_parallel_volume_is_2psi_and_3psi(rows):
    """bf16 gradients and weights (2 bytes); a ring over 8 ranks sends 7/8 of each volume."""
    for name, k in (("DP 8", 2), ("DP 8, ZeRO-1", 2), ("DP 8, ZeRO-2", 2), ("DP 8, ZeRO-3", 3)):
        r = rows[name]
        assert r["zero_volume"] == k
        assert r["comm_total"] == k * sympy.Rational(7, 8) * PSI * 2
    assert rows["DP 8"]["comm"] == {"all-reduce": 2 * sympy.Rational(7, 8) * PSI * 2}
    assert rows["DP 8, ZeRO-1"]["comm"] == {"reduce-scatter": sympy.Rational(7, 8) * PSI * 2,
                                            "all-gather": sympy.Rational(7, 8) * PSI * 2}
    assert rows["TP 4 + SP, DP 2"]["zero_volume"] is None


def test_every_number_is_the_engines(model, rows):
    peak, link, node = sympy.Integer(9895) * 10**11, 450 * 10**9, 50 * 10**9   # the H100 SXM datasheet
    for r in rows.values():
        o = {"precision": "mixed-bf16", "optimizer": "adamw", **r["options"]}
        machine = dict(peak=peak, link_bandwidth=link, node_bandwidth=node, node_size=8)
        # a pipeline: the busier stage's memory, the slower stage's time and bytes (first or last)
        stages = [{"stage": "first"}, {"stage": "last"}] if o.get("pp", 1) > 1 else [{}]
        mem = max(stages, key=lambda st: model.quantity("memory.total", **o, **st).value)
        slow = max(stages, key=lambda st: model.quantity("time.step", **o, **st, **machine).value)
        parts = [model.quantity(f"memory.{p}", **o, **mem).value for p in MEMORY]
        assert list(r["memory"].values()) == parts
        assert r["memory_total"] == model.quantity("memory.total", **o, **mem).value == sum(parts)
        assert r["comm_total"] == model.quantity("comm.total", **o, **slow).value == sum(r["comm"].values())
        step = model.quantity("time.step", **o, **slow, **machine)
        assert r["step"] == step.value == sum(r["time"].values())
        if o.get("pp", 1) > 1:   # GPT-2 small: the first stage holds more in flight, the last the head
            assert mem == {"stage": "first"} and slow == {"stage": "last"}
        assert r["sequences"] == 8 * o.get("microbatches", 1) * o.get("dp", 1)


def test_the_bubble_time_is_the_fraction_of_the_compute(rows):
    one, inter = rows["PP 4 (1F1B, m = 8), DP 2"], rows["PP 4 interleaved (v = 3, m = 8), DP 2"]
    assert one["time"]["bubble"] == sympy.Rational(3, 8) * one["time"]["compute"]
    assert inter["time"]["bubble"] == sympy.Rational(1, 8) * inter["time"]["compute"]
    assert rows["DP 8"]["time"]["bubble"] == 0


def test_full_recompute_keeps_one_input_per_layer_and_adds_a_forward(model, rows):
    """Full recomputation: the same states; compute rises by the layers' forward over the peak."""
    a, b = rows["DP 8"], rows["DP 8, full recompute"]
    assert a["per_param"] == b["per_param"] and b["memory"]["activations"] < a["memory"]["activations"]
    fwd = model.quantity("flops.forward").value - 2 * 8 * 1024 * 768 * 50257   # the LM head is not rerun
    assert b["time"]["compute"] - a["time"]["compute"] == fwd / (sympy.Integer(9895) * 10**11)


@pytest.fixture(scope="module")
def report(model, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "gpt2-small"
    write_report(model, out, pdf=False)
    return out / "cluster"


def test_report_files_carry_the_same_numbers(report, rows):
    names = sorted(p.name for p in report.iterdir())
    assert names == ["cluster.json", "cluster.md", "memory.svg", "schedule-1f1b.svg", "schedule-1f1b.tex",
                     "schedule-interleaved.svg", "schedule-interleaved.tex"]
    data = json.loads((report / "cluster.json").read_text())
    assert data["hardware"]["peak"] == str(9895 * 10**11) and "H100" in data["hardware"]["source"]
    for s in data["strategies"]:
        r = rows[s["name"]]
        assert s["memory_total"] == str(r["memory_total"]) and s["comm_total"] == str(r["comm_total"])
        assert s["step"] == str(r["step"])
    md = (report / "cluster.md").read_text()
    assert "| DP 8, ZeRO-3 | 1/4 + 1/4 + 3/2 |" in md and "(p - 1)/m = 3/8 | equal" in md


def test_memory_svg_bars_are_the_engines_bytes(report, rows):
    root = ET.parse(report / "memory.svg").getroot()
    rects = [r for r in root.iter(NS + "rect") if float(r.get("width")) == 28]
    top = max(float(r["memory_total"]) for r in rows.values())
    want = [float(r["memory"][p]) / top * 220 for r in rows.values() for p in MEMORY]
    assert [float(r.get("height")) for r in rects] == pytest.approx(want, abs=0.006)


def test_schedule_svg_has_every_op(report):
    """p·m forwards and backwards (× v chunks interleaved) plus one lane per device."""
    for name, n in (("schedule-1f1b.svg", 4 * 8 * 2 + 4), ("schedule-interleaved.svg", 4 * 8 * 3 * 2 + 4)):
        root = ET.parse(report / name).getroot()
        assert len(list(root.iter(NS + "rect"))) == n


def test_svgs_render_in_a_browser(report):
    """Chromium lays each drawing out: every bar and box has its size on the page."""
    b = helpers.chromium()
    try:
        for name in ("memory.svg", "schedule-1f1b.svg", "schedule-interleaved.svg"):
            b.get((report / name).as_uri())
            boxes = b.execute_script("return Array.from(document.querySelectorAll('rect'))"
                                     ".map(r => [r.getBBox().width, r.getBBox().height]);")
            want = [(float(r.get("width")), float(r.get("height")))
                    for r in ET.parse(report / name).getroot().iter(NS + "rect")]
            got = [tuple(x) for x in boxes]
            assert len(got) == len(want) and all(g == pytest.approx(w, abs=0.01) for g, w in zip(got, want)), name
    finally:
        b.quit()


def test_latex_section_compiles_and_says_the_numbers(model, tmp_path):
    tex = tmp_path / "cluster.tex"
    tex.write_text(document(model, "cluster"))
    rc, log, text = helpers.compile_tex(tex, layout=True)
    assert rc == 0 and not [line for line in log.splitlines() if line.startswith("!")]
    text = " ".join(text.split())
    for s in ("Training on a cluster", "1F1B pipeline schedule", "interleaved 1F1B", "7.69 GB", "435.5", "653.3",
              "NVIDIA H100 SXM", "Rajbhandari", "2 + 2 + 12", "DP 8, ZeRO-3", "equal"):
        assert s in text, s
