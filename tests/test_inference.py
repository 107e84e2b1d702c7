"""Inference quantities by hand arithmetic: bytes of a decode step op by op, quantization,
tensor parallelism, the closed-form generation against a step-by-step sum, the critical batch
by its definition, and the hardware profiles."""

import json
import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.derive.roofline import roofline_points
from symgpt.core.hardware import PROFILES, hardware
from symgpt.core.symbols import BW_mem, F_peak

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def gpt2(**kw):
    return symgpt.load("gpt2-small", B=4, T=100, **kw)


def test_decode_bytes_of_gpt2_ops_by_hand():
    q = gpt2().quantity("inference.decode.bytes")
    B, T, d, h, L, V = 4, 100, 768, 12, 12, 50257
    # fused QKV: weight 3d² and bias 3d read once, input B·d read, output B·3d written; 2 bytes; ×L
    assert q.values()["blocks/attention/qkv"] == L * 2 * (3 * d * d + 3 * d + B * d + 3 * B * d)
    # K heads: a view the cache holds -- the new token's keys copied in (read B·d, write B·d)
    assert q.values()["blocks/attention/k_heads"] == L * 2 * (B * d + B * d)
    # Q·Kᵀ: reads Q (B·d) and the whole cache of keys (B·(T + 1)·d), writes B·h·(T + 1) scores
    assert q.values()["blocks/attention/scores"] == L * 2 * (B * d + B * (T + 1) * d + B * h * (T + 1))
    # the token table: B rows of d read (B int64 ids), B·d written; the tied LM head reads it whole
    assert q.values()["embedding/token"] == B * d * 2 + B * 8 + B * d * 2
    assert q.values()["lm_head"] == 2 * (V * d + B * d + B * V)
    # a head split is a view: no bytes
    assert "blocks/attention/q_heads" not in q.paths()


def test_flash_attention_keeps_the_scores_out_of_memory():
    eager = gpt2().quantity("inference.decode.bytes").values()
    flash = gpt2().quantity("inference.decode.bytes", attention="flash").values()
    B, T, d, L = 4, 100, 768, 12
    assert "blocks/attention/softmax" not in flash
    assert flash["blocks/attention/scores"] == L * 2 * (B * d + B * (T + 1) * d)          # Q, K in; nothing out
    assert flash["blocks/attention/values"] == L * 2 * (B * (T + 1) * d + B * d)          # V in; O out
    assert eager["blocks/attention/softmax"] == L * 2 * 2 * B * 12 * (T + 1)


def test_quantized_weights_and_cache():
    m = symgpt.load("llama-7b", B=1, T=64)
    w16 = m.quantity("inference.weights").values()
    w4 = m.quantity("inference.weights", weight_bits=4, group_size=128).values()
    d, dff, L = 4096, 11008, 32
    # int4 with a 16-bit scale per 128 weights: 1/2 + 2/128 bytes per weight
    assert w4["blocks/ffn/up"] == L * d * dff * (sympy.Rational(1, 2) + sympy.Rational(2, 128))
    assert w16["blocks/ffn/up"] == L * d * dff * 2
    # norms, the token table and the LM head stay 16-bit
    assert w4["lm_head"] == w16["lm_head"] == 32000 * d * 2
    assert w4["blocks/norms/ffn"] == w16["blocks/norms/ffn"] == L * d * 2
    kv = m.quantity("inference.kv_cache").value
    assert m.quantity("inference.kv_cache", kv_bits=8).value == kv / 2 == 2 * L * d * 64
    assert m.quantity("inference.kv_cache", fp8=True).value == kv / 2


def test_tensor_parallel_halves_split_weights_and_adds_two_all_reduces_per_layer():
    m = symgpt.load("llama-7b", B=2, T=64)
    one = m.quantity("inference.weights").values()
    two = m.quantity("inference.weights", chips=2).values()
    assert two["blocks/ffn/down"] == one["blocks/ffn/down"] / 2
    assert two["blocks/norms/ffn"] == one["blocks/norms/ffn"]                  # replicated
    t = m.quantity("inference.decode.time", chips=2, hardware="h100-sxm")
    reduces = [p for p in t.paths() if p.endswith("/all_reduce")]
    assert reduces == ["blocks/attention/proj/all_reduce", "blocks/ffn/down/all_reduce"]
    # a ring all-reduce of B·d bf16 values over 2 devices: 2·(N-1)/N · bytes / link, ×L
    link = hardware("h100-sxm").link_bandwidth
    assert t.values()["blocks/ffn/down/all_reduce"] == 32 * sympy.Rational(2 * 1, 2) * 2 * 4096 * 2 / link


def test_generation_in_closed_form_equals_the_sum_of_its_steps():
    m = symgpt.load("gpt2-small", B=3)
    opts = dict(hardware="a100-80gb")
    P, G = 40, 7
    gen = m.quantity("inference.generate.time", prompt=P, generate=G, **opts).value
    pre = m.with_(T=P).quantity("inference.prefill.time", **opts).value
    steps = [m.with_(T=t).quantity("inference.decode.time", **opts).value for t in range(P, P + G - 1)]
    assert gen == pre + sum(steps)
    assert m.quantity("inference.ttft", prompt=P, generate=G, **opts).value == pre
    assert m.quantity("inference.tpot", prompt=P, generate=G, **opts).value == sum(steps) / (G - 1)
    assert m.quantity("inference.tokens_per_s", prompt=P, generate=G, **opts).value == 3 * G / gen


def test_generation_that_turns_memory_bound_midway_is_split_exactly():
    # at B = 512 a gpt2-small decode step's dense matmuls are compute-bound on an L40S, attention
    # memory-bound: over a long generation the per-op maxima switch sides; the closed form must
    # still equal the step-by-step sum
    m = symgpt.load("gpt2-small", B=512)
    opts = dict(hardware="l40s", convention="default")
    P, G = 1, 40
    gen = m.quantity("inference.generate.time", prompt=P, generate=G, **opts).value
    pre = m.with_(T=P).quantity("inference.prefill.time", **opts).value
    steps = sum(m.with_(T=t).quantity("inference.decode.time", **opts).value for t in range(P, P + G - 1))
    assert gen == pre + steps


def test_critical_batch_is_where_compute_time_equals_memory_time():
    m = symgpt.load("llama-7b", T=16)
    q = m.quantity("inference.critical_batch", hardware="h100-sxm")
    b = q.value
    assert 0 < b < 1000
    at = m.with_(B=1)
    f = m.quantity("inference.decode.flops").expr.xreplace({sympy.Symbol("B", integer=True, positive=True): b})
    by = m.quantity("inference.decode.bytes").expr.xreplace({sympy.Symbol("B", integer=True, positive=True): b})
    peak, bw = hardware("h100-sxm").peak("bf16"), hardware("h100-sxm").hbm_bandwidth
    assert (f / peak - by / bw).xreplace(at.bindings) == 0
    # scaling-book, symbolically: F_peak / BW_mem × (bytes per weight) / 2
    book = m.quantity("inference.critical_batch", convention="scaling-book", weight_bits=4)
    assert book.expr == F_peak / BW_mem / 4


def test_decode_time_is_the_sum_of_per_op_maxima():
    m = symgpt.load("llama-7b", B=16, T=512)
    opts = dict(hardware="mi300x")
    t = m.quantity("inference.decode.time", **opts).value
    h = hardware("mi300x")
    pts = roofline_points(m, "decode", **opts)
    assert t == sum(max(p.flops_value / h.peak("bf16"), p.bytes_value / h.hbm_bandwidth) for p in pts)
    assert {p.bound for p in pts} == {"memory"}         # B = 16 is far below the critical batch


def test_hardware_profiles_are_exact_and_sourced():
    required = {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200", "mi300x", "l40s",
                "tpu-v4", "tpu-v5e", "tpu-v5p"}
    assert required <= {h.name for h in PROFILES}
    for h in PROFILES:
        assert "bf16" in h.peaks and all(isinstance(v, int) and v > 0 for v in h.peaks.values())
        assert isinstance(h.hbm_bandwidth, int) and isinstance(h.memory, int) and h.source
    # datasheet figures, dense: H100 SXM 1,979 TFLOP/s bf16 with sparsity, 3.35 TB/s, 80 GB
    h = hardware("h100-sxm")
    assert (h.peak("bf16"), h.hbm_bandwidth, h.memory) == (989_500 * 10**9, 3_350 * 10**9, 80 * 10**9)
    assert hardware("tpu-v5e").memory == 16 * 2**30        # Google prints GiB
    assert hardware("mi300x").peak("fp8") == 2_614_900 * 10**9


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_infer_and_hardware():
    r = _cli("infer", "gpt2-small", "--set", "B=2", "--set", "T=64", "--hardware", "h100-sxm",
             "--prompt", "32", "--generate", "8", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    m = symgpt.load("gpt2-small", B=2, T=64)
    assert out["inference.kv_cache"]["value"] == m.quantity("inference.kv_cache").value == 2 * 12 * 768 * 2 * 64 * 2
    assert out["inference.decode.flops"]["convention"] == "default"
    assert "blocks/attention/scores" in out["inference.decode.time"]["breakdown"]
    r = _cli("infer", "gpt2-small", "--set", "B=2", "--set", "T=64", "--hardware", "tpu-v5e")
    assert r.returncode == 0 and "bound" in r.stdout and "memory" in r.stdout
    r = _cli("hardware", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)["hardware"]) == len(PROFILES)


@pytest.mark.parametrize("args,message", [
    (["--hardware", "h900"], "invalid choice"),
    (["--prompt", "8"], "--prompt and --generate go together"),
    (["--weight-bits", "16", "--group-size", "64"], "a group size applies to quantized weights"),
    (["--chips", "0"], "--chips must be a positive integer"),
    (["--peak", "__import__('os')"], "error"),
    (["--fp8", "--act-bits", "8"], "fp8 sets the weights and activations"),
    (["--prompt", "1000", "--generate", "100"], "T must not exceed T_max"),
    (["--figure", "/nonexistent-dir/x.pdf", "--hardware", "h100-sxm"], "--figure writes .tex or .svg"),
])
def test_cli_infer_errors_are_one_line(args, message):
    r = _cli("infer", "gpt2-small", *args)
    assert r.returncode == 2
    assert r.stderr.startswith("symgpt: error:") and message in r.stderr and r.stderr.count("\n") == 1


def test_roofline_figure_tex_compiles_and_svg_is_well_formed(tmp_path):
    import shutil
    import xml.etree.ElementTree as ET

    from symgpt.derive.roofline import roofline

    m = symgpt.load("llama-7b", B=64, T=512)
    r = roofline(m, hardware="h100-sxm")
    h = hardware("h100-sxm")
    assert r.ridge == sympy.Rational(h.peak("bf16"), h.hbm_bandwidth)
    # every point lies on or under the roof: min(peak, intensity × bandwidth)
    assert all(y <= min(h.peak("bf16"), x * h.hbm_bandwidth) for _, _, x, y, _ in r.points)
    # the decode step's dense matmuls at B = 64: 2·B FLOPs per 2-byte weight ≈ 64 FLOPs/byte
    q = next(p for p in r.points if p[0] == "decode" and p[1] == "blocks/ffn/up")
    assert 60 < q[2] < 64 and q[4] == "memory"
    tex_file, svg_file = tmp_path / "roof.tex", tmp_path / "roof.svg"
    assert _cli("infer", "llama-7b", "--set", "B=64", "--set", "T=512", "--hardware", "h100-sxm",
                "--figure", str(tex_file)).returncode == 0
    assert _cli("infer", "llama-7b", "--set", "B=64", "--set", "T=512", "--hardware", "h100-sxm",
                "--figure", str(svg_file)).returncode == 0
    root = ET.fromstring(svg_file.read_text())
    assert root.tag.endswith("svg") and len(root.findall(".//{http://www.w3.org/2000/svg}circle")) == \
        sum(1 for p in r.points if p[0] == "decode")
    r2 = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex_file.name],
                        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r2.returncode == 0, r2.stdout[-2000:]
    assert shutil.os.path.getsize(tmp_path / "roof.pdf") > 0
    bad = _cli("infer", "llama-7b", "--set", "B=64", "--figure", str(tmp_path / "x.svg"))
    assert bad.returncode == 2 and "needs a device" in bad.stderr


def test_graph_colours_each_decode_op_by_what_bounds_it():
    from symgpt.derive.roofline import step_view
    from symgpt.documents.diagrams import dot_text
    from symgpt.render.dotparts import BOUND_FILL

    m = symgpt.load("llama-7b", B=512, T=16)
    dot = dot_text(m, color_by="bound", step=step_view(m, "decode", bound=True, hardware="h100-sxm"))
    pts = {p.node: p.bound for p in roofline_points(m, "decode", hardware="h100-sxm")}
    assert pts["blocks/ffn/up"] == "compute" and pts["blocks/attention/scores"] == "memory"
    assert dot.count(BOUND_FILL["compute"]) >= 1 + sum(1 for b in pts.values() if b == "compute")
    assert "(512, 32, 1, 17)" in dot          # the decode step's scores: 1 query against T + 1 keys
    r = _cli("graph", "llama-7b", "--phase", "decode", "--color-by", "bound", "--set", "B=4",
             "--set", "T=16", "--hardware", "l40s", "--format", "dot")
    assert r.returncode == 0 and "memory-bound" in r.stdout


def test_grouped_query_decode_reads_the_kv_heads_not_the_query_heads():
    # Mistral-7B: h = 32 query heads, h_kv = 8 KV heads of 128; the repeat is a view, so Q·Kᵀ reads
    # the 8 cached heads (what LLM-Viewer's count got wrong), writes h scores per position
    B, T, L, h, hkv, dh = 2, 100, 32, 32, 8, 128
    q = symgpt.load("mistral-7b", B=B, T=T).quantity("inference.decode.bytes").values()
    assert q["blocks/attention/scores"] == L * 2 * (B * h * dh + B * (T + 1) * hkv * dh + B * h * (T + 1))
    assert "blocks/attention/k_repeat" not in q


def test_experts_read_are_the_ones_the_tokens_can_reach():
    # Mixtral-8x7B: 8 experts of three 4096×14336 matrices, 2 per token; one sequence's decode
    # step reads 2 experts per layer, four sequences can reach all 8
    L, d, dff = 32, 4096, 14336
    one = symgpt.load("mixtral-8x7b", B=1, T=64).quantity("inference.decode.bytes").values()
    four = symgpt.load("mixtral-8x7b", B=4, T=64).quantity("inference.decode.bytes").values()
    up = [p for p in one if p.endswith("experts/up")][0]
    # weights of Min(E, k·B) experts; each routed token (k·B) reads a row of d, writes one of d_ff
    assert one[up] == L * (2 * d * dff * 2 + 2 * 1 * (d + dff) * 2)
    assert four[up] == L * (8 * d * dff * 2 + 2 * 4 * (d + dff) * 2)


def test_cli_infer_json_with_peak_and_bandwidth_given():
    r = _cli("infer", "gpt2-small", "--set", "B=2", "--set", "T=8", "--peak", "1e15", "--bandwidth", "2.5e12",
             "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["options"]["peak"] == "1000000000000000"
    m = symgpt.load("gpt2-small", B=2, T=8)
    t = m.quantity("inference.decode.time", peak=10**15, bandwidth=25 * 10**11).value
    assert out["inference.decode.time"]["exact_value"] == str(t)


def test_rule_and_dominance_of_a_time_take_the_far_side_of_each_max():
    from symgpt.query import dominance, rule

    m = symgpt.load("gpt2")
    t = m.quantity("inference.decode.time", convention="scaling-book")
    # as B grows the book's step is compute-bound on the weights, the KV read stays: 2·B·N / F_peak
    # + B·(KV bytes per sequence) / BW_mem
    kv = m.quantity("inference.kv_cache").expr
    assert sympy.expand(rule(t, "B").rule - (2 * m.params.expr * sympy.Symbol("B", integer=True, positive=True)
                                              / F_peak + kv / BW_mem)) == 0
    d = dominance(symgpt.load("llama-7b", B=8, T=128).quantity("inference.decode.time", hardware="h100-sxm"), "T")
    assert "4*B*L*T*d/BW_mem" in str(d.dominant).replace(" ", "")
