"""Training on a cluster: memory per device under pipeline/expert/context parallelism,
communication per device, step time -- each against a published formula or hand arithmetic."""

import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.derive.layout import layout
from symgpt.derive.pipeline import bubble_fraction, peak_in_flight
from symgpt.core.symbols import B, L, T, T_max, V, d, h

KORTH = dict(convention="korthikanti", recompute="selective")
R = sympy.Rational


def _blocks(**opts):
    return symgpt.load("gpt2").quantity("memory.activations", **opts).part("blocks").expr


# --- Korthikanti et al. 2022, Table 2 and §4.2.3: activations of the first pipeline stage ----------
@pytest.mark.parametrize("t,p,m", [(2, 2, 4), (4, 4, 8), (8, 4, 4)])
def test_korthikanti_first_stage_sequence_parallel_selective(t, p, m):
    # Table 2 (sequence + selective): sbh·34/t per layer; §4.2.3: the first stage holds p
    # micro-batches of L/p layers, L layers in all (s, b, h -> T, B, d)
    assert sympy.expand(_blocks(**KORTH, tp=t, sp=True, pp=p, microbatches=m) - T * B * d * L * 34 / t) == 0


@pytest.mark.parametrize("t", [2, 4])
def test_korthikanti_tensor_parallel_selective_and_full(t):
    # Table 2: tensor parallel + selective: sbh(10 + 24/t); + sequence parallel, full: 2sbh/t
    assert sympy.expand(_blocks(**KORTH, tp=t) - T * B * d * L * (10 + R(24, t))) == 0
    full = _blocks(convention="korthikanti", recompute="full", tp=t, sp=True)
    assert sympy.expand(full - 2 * T * B * d * L / t) == 0


@pytest.mark.parametrize("p,v,m", [(2, 2, 4), (4, 2, 8), (4, 4, 8)])
def test_interleaved_memory_factor(p, v, m):
    # Narayanan et al. 2021 / Megatron-LM: interleaving multiplies the first stage's
    # activations by 1 + (p - 1)/(p·v)
    base = T * B * d * L * 34 / 2
    got = _blocks(**KORTH, tp=2, sp=True, pp=p, vp=v, microbatches=m)
    assert sympy.expand(got - base * (1 + R(p - 1, p * v))) == 0


def test_interleaved_with_few_microbatches_holds_them_all():
    # p = v = m = 4: the warm-up (2(p - 1) + (v - 1)p + 1 = 19 chunks) exceeds the v·m = 16
    # chunks of the step, so all of them are in flight: L layers, less than Megatron's factor
    got = _blocks(**KORTH, tp=2, sp=True, pp=4, vp=4, microbatches=4)
    assert sympy.expand(got - T * B * d * L * 17) == 0
    assert peak_in_flight(4, 4, 4) == 16


def test_fewer_microbatches_than_stages():
    # 1F1B with m < p micro-batches: only m in flight: m/p of L layers (Megatron-LM's discount)
    got = _blocks(**KORTH, tp=2, sp=True, pp=8, microbatches=2)
    assert sympy.expand(got - T * B * d * L * 17 * R(2, 8)) == 0


def test_in_flight_matches_the_run_of_the_schedule():
    for p, m, v in [(4, 8, 1), (4, 2, 1), (2, 4, 2), (4, 8, 2), (3, 6, 3)]:
        for stage, device in (("first", 0), ("last", p - 1)):
            lay = layout(pp=p, vp=v, microbatches=m, stage=stage)
            assert peak_in_flight(p, m, v, device=device) == lay.in_flight("stack") * p * v


# --- bubbles: GPipe (Huang et al. 2019), 1F1B and interleaved (Narayanan et al. 2021 §2.2) -------
@pytest.mark.parametrize("p,m", [(2, 1), (2, 4), (4, 4), (4, 16), (8, 8), (3, 5)])
def test_bubble_1f1b_and_gpipe(p, m):
    assert bubble_fraction(p, m, 1, "1f1b") == R(p - 1, m)
    assert bubble_fraction(p, m, 1, "gpipe") == R(p - 1, m)
    assert bubble_fraction(p, m, 1, "1f1b", forward=1, backward=1) == R(p - 1, m)


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (4, 4, 4), (3, 9, 3)])
def test_bubble_interleaved(p, m, v):
    assert bubble_fraction(p, m, v) == R(p - 1, v * m)


# --- weights of a stage: hand arithmetic ------------------------------------------------------------
def test_stage_weights_gpt2():
    m = symgpt.load("gpt2")
    first = m.quantity("memory.weights", precision="bf16", pp=4).expr
    last = m.quantity("memory.weights", precision="bf16", pp=4, stage="last").expr
    block = 12 * d**2 + 13 * d                      # lecture note 7.3 §4.1
    assert sympy.expand(first - 2 * (L * block / 4 + V * d + T_max * d)) == 0
    # the last stage: its layers, the final LayerNorm and its copy of the tied embedding
    assert sympy.expand(last - 2 * (L * block / 4 + 2 * d + V * d)) == 0
    one = m.quantity("memory.weights", precision="bf16").expr
    assert sympy.expand(one - 2 * (L * block + V * d + T_max * d + 2 * d)) == 0


def test_expert_parallel_weights_mixtral():
    m = symgpt.load("mixtral-8x7b")
    full = m.quantity("memory.weights", precision="bf16", dp=4).value
    split = m.quantity("memory.weights", precision="bf16", dp=4, ep=4).value
    # each expert: gate, up (d -> d_ff) and down (d_ff -> d), no biases; 3/4 of 8 leave the rank
    Lv, dv, ffv = 32, 4096, 14336
    assert full - split == 2 * Lv * 8 * 3 * dv * ffv * R(3, 4)


def test_offload_moves_the_optimizer_to_the_host():
    m = symgpt.load("gpt2-small")
    opt = m.quantity("memory.optimizer", precision="mixed-bf16").value
    assert m.quantity("memory.optimizer", precision="mixed-bf16", offload=True).value == 0
    assert m.quantity("memory.host", precision="mixed-bf16", offload=True).value == opt
    assert opt == 12 * 124_439_808   # fp32 master + m + v: 12 bytes per parameter (ZeRO §3.1)


# --- communication: the ZeRO paper's volumes (Rajbhandari et al. 2019 §7) -------------------------
@pytest.mark.parametrize("zero,elements", [(0, 2), (1, 2), (2, 2), (3, 3)])
def test_zero_volumes(zero, elements):
    n = sympy.Symbol("n", integer=True, positive=True)
    m = symgpt.load("gpt2")
    q = m.quantity("comm.dp", precision="bf16", dp=n, zero=zero).expr
    psi = m.params.expr
    ratio = sympy.simplify(q / (2 * psi))               # elements sent per parameter
    assert sympy.simplify(ratio - elements * (n - 1) / n) == 0   # ring: (n - 1)/n of each
    assert sympy.limit(ratio, n, sympy.oo) == elements


def test_tensor_parallel_volume_per_layer():
    # Megatron-LM: 2 all-reduces forward + 2 backward per layer of B·T·d activations; a ring
    # all-reduce sends 2(t - 1)/t of it
    m = symgpt.load("gpt2")
    q = m.quantity("comm.tp", precision="bf16", tp=4)
    layers = sum(e for p, e in q.breakdown if p.startswith("tp/blocks/"))
    assert sympy.expand(layers - 4 * 2 * R(3, 4) * B * T * d * 2 * L) == 0
    sp = m.quantity("comm.tp", precision="bf16", tp=4, sp=True)
    assert sympy.expand(sum(e for p, e in sp.breakdown if p.startswith("tp/blocks/")) - layers) == 0


def test_pipeline_and_context_volumes():
    m = symgpt.load("gpt2")
    q = m.with_(tied=False).quantity("comm.pp", precision="bf16", pp=4, microbatches=8, stage="last")
    # the last stage sends each micro-batch's gradient (B·T·d, 2 bytes) back once
    assert sympy.expand(q.expr - 8 * B * T * d * 2) == 0
    c = m.quantity("comm.cp", precision="bf16", cp=4)
    # ring attention: K and V (B·T/4·d each) sent 3 × (cp - 1) times per layer
    assert sympy.expand(c.expr - 3 * 3 * 2 * B * T * d / 4 * 2 * L) == 0


# --- time: Narayanan et al. 2021 §5.1: end-to-end training time ≈ 8·T·P/(n·X) ---------------------
def test_narayanan_time_to_train():
    n, X, D = 1024, 140 * 10**12, 300 * 10**9
    m = symgpt.load("gpt2")
    q = m.quantity("time.to_train", tokens=D, convention="megatron", dp=n, peak=X,
                   link_bandwidth=1, node_bandwidth=1, overlap_dp=True)
    P = 12 * L * d**2
    estimate = 8 * D * P / (n * X)
    assert sympy.limit(q.expr / estimate, d, sympy.oo) == 1


def test_step_time_adds_its_parts():
    m = symgpt.load("gpt3-1.3b", B=1, T=2048)
    o = dict(precision="mixed-bf16", tp=2, pp=4, dp=2, microbatches=8, peak=312 * 10**12,
             link_bandwidth=300 * 10**9, node_bandwidth=25 * 10**9)
    c, k, b = (m.quantity(x, **o).value for x in ("time.compute", "time.comm", "time.bubble"))
    assert m.quantity("time.step", **o).value == c + k + b
    assert b == c * R(3, 8)                 # (p - 1)/m of the compute


def test_a_cluster_given_whole_prices_as_its_keyword_options():
    """``cluster=`` (a ``Cluster``) is the same step as the keyword options it is made from, on
    every time.* quantity; a one-device option beside it is refused in one line."""
    from symgpt.core.errors import SymgptError
    from symgpt.derive.steptime import Cluster

    m = symgpt.load("gpt3-1.3b", B=1, T=2048)
    o = dict(precision="mixed-bf16", tp=2, pp=4, dp=2, microbatches=8, peak=312 * 10**12,
             link_bandwidth=300 * 10**9, node_bandwidth=25 * 10**9)
    cl = Cluster.from_options(**o)
    for name in ("time.compute", "time.comm", "time.bubble", "time.step", "time.mfu_cluster", "time.hfu"):
        assert m.quantity(name, cluster=cl).expr == m.quantity(name, **o).expr, name
    assert m.quantity("time.to_train", tokens=10**9, cluster=cl).value == \
        m.quantity("time.to_train", tokens=10**9, **o).value
    c, k, b = (m.quantity(x, cluster=cl).value for x in ("time.compute", "time.comm", "time.bubble"))
    assert m.quantity("time.step", cluster=cl).value == c + k + b
    for bad in (dict(peak=10**12), dict(mfu=R(1, 2)), dict(tp=4)):
        with pytest.raises(SymgptError, match="not beside it"):
            m.quantity("time.step", cluster=cl, **bad)
    with pytest.raises(SymgptError, match="not beside it"):
        m.quantity("time.comm", cluster=cl, tp=4)


# --- the command line ---------------------------------------------------------------------------
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def test_comm_cli_prints_every_dimension():
    r = _cli("comm", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--precision", "bf16", "--dp", "4")
    assert r.returncode == 0, r.stderr
    # 2·(3/4)·124,439,808 parameters · 2 bytes
    assert f"{3 * 124_439_808:,}" in r.stdout and "comm.total" in r.stdout


@pytest.mark.parametrize("args,word", [(("--vp", "2"), "pp > 1"), (("--ep", "2", "--dp", "2"), "no experts"),
                                       (("--pp", "5"), "divide"), (("--ep", "2"), "ep=2 must divide dp=1")])
def test_bad_layouts_are_one_line_errors(args, word):
    r = _cli("memory", "gpt2-small", *args)
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and word in r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr


# --- plan: the vectorised pass agrees with the one-strategy derivations --------------------------
def test_plan_agrees_with_each_strategy_derived_alone():
    from symgpt.derive.options import Machine, Training
    from symgpt.derive.steptime import Cluster
    from symgpt.sweep.plan import Search, plan

    m = symgpt.load("gpt3-1.3b", T=2048)
    peak, link, node = 312 * 10**12, 300 * 10**9, 25 * 10**9
    cluster = Cluster(Machine(peak=peak, device_memory=40 * 10**9, link_bandwidth=link, node_bandwidth=node),
                      training=Training(precision="mixed-bf16"))
    r = plan(m, 16, 64, cluster, Search(recompute=("selective",), vps=(1, 2)), top=4)
    assert r.rows and r.fitting <= r.considered
    times = [row["time"] for row in r.rows]
    assert times == sorted(times)
    for row in r.rows:
        assert row["tp"] * row["pp"] * row["dp"] * row["cp"] == 16
        assert row["microbatch"] * row["microbatches"] * row["dp"] == 64
        o = dict(precision="mixed-bf16", recompute="selective", zero=row["zero"], sp=row["sp"], tp=row["tp"],
                 pp=row["pp"], vp=row["vp"], dp=row["dp"], cp=row["cp"], ep=row["ep"],
                 microbatches=row["microbatches"])
        one = m.with_(B=row["microbatch"])
        mem = max(one.quantity("memory.total", **o).value, one.quantity("memory.total", stage="last", **o).value)
        t = dict(peak=peak, link_bandwidth=link, node_bandwidth=node)
        step = max(one.quantity("time.step", **o, **t).value, one.quantity("time.step", stage="last", **o, **t).value)
        assert (row["memory"], row["time"]) == (mem, step)
        assert mem <= 40 * 10**9


# --- Megatron-LM's printed theoretical figures, by hand arithmetic ---------------------------------
def test_megatron_theoretical_gpt3_175b():
    m = symgpt.load("gpt3-175b", B=1, T=2048)
    q = m.quantity("memory.megatron", convention="megatron-theoretical", tp=8, pp=16, dp=8,
                   microbatches=64, sp=True, distributed_optimizer=True)
    Lv, dv, s = 96, 12288, 2048
    layers = 2 * Lv * dv * dv * 6 + 4 * Lv * dv + 2 * dv  # 2Ld²(2 + 4 + 2/d + 1/(Ld))
    vocab = 51200                                          # 50257 padded to a multiple of 128·8
    shard = R(layers, 16) + dv * vocab
    weights = shard / 8 * (6 + R(12, 8))                   # distributed optimizer over dp = 8
    act = (s * dv * 34 * Lv + 8 * s * 16 + s * dv * 16) * 1 / R(8)   # min(1, 64/16) = 1
    assert m.value(q["weight and optimizer"]) == weights == 10_782_260_640
    assert m.value(q["activation"]) == act == 10_318_020_608
    r = _cli("memory", "gpt3-175b", "--set", "B=1", "--set", "T=2048", "--convention", "megatron-theoretical",
             "--tp", "8", "--pp", "16", "--dp", "8", "--microbatches", "64", "--sp", "--distributed-optimizer")
    assert ("Theoretical memory footprints: weight and optimizer=10282.77 MB, activation=9840.03 MB, "
            "total=20122.80 MB") in r.stdout


def test_megatron_theoretical_one_stage_untied_no_sp():
    # pp = 1, untied head, no distributed optimizer: 18 bytes per parameter, two embeddings;
    # without sequence parallelism Megatron-LM prints the weights only
    m = symgpt.load("gpt3-1.3b", tied=False)
    q = m.quantity("memory.megatron", convention="megatron-theoretical", tp=2)
    Lv, dv = 24, 2048
    layers = 12 * Lv * dv * dv + 4 * Lv * dv + 2 * dv
    vocab = 50432                                          # 50257 padded to a multiple of 256
    assert q.paths() == ["weight and optimizer"]
    assert q.value == (R(layers, 1) + 2 * dv * vocab) / 2 * 18


def test_megatron_theoretical_llama_gqa_swiglu():
    # GQA (h_kv = 8 of 64 heads) and SwiGLU (3/2 of the FFN matrices), untied head, pp = 4
    m = symgpt.load("llama-70b", B=1, T=4096)
    q = m.quantity("memory.megatron", convention="megatron-theoretical", tp=8, pp=4, dp=4,
                   microbatches=16, sp=True)
    Lv, dv, ff = 80, 8192, 28672
    layers = 2 * Lv * dv * dv * (1 + R(8, 64) + R(ff, dv) * R(3, 2) + R(2, dv) + R(1, Lv * dv))
    vocab = 32768                                        # 32000 padded to a multiple of 1024
    assert q.value is not None
    assert m.value(q["weight and optimizer"]) == (layers / 4 + dv * vocab) / 8 * 18
    act = (4096 * dv * (18 + 4 * R(ff, dv)) * Lv + 8 * 4096 * 4 + 4096 * dv * 4) / 8
    assert m.value(q["activation"]) == act


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (4, 16, 2), (3, 9, 3), (4, 8, 1), (4, 2, 1)])
def test_embedding_and_head_in_flight_match_the_run(p, m, v):
    # the embedding lives in the first device's first chunk, the head in the last device's last
    first, last = layout(pp=p, vp=v, microbatches=m), layout(pp=p, vp=v, microbatches=m, stage="last")
    assert first.in_flight("pre") == peak_in_flight(p, m, v, device=0, chunk=0)
    assert last.in_flight("post") == peak_in_flight(p, m, v, device=p - 1, chunk=v - 1) == 1


def test_mfu_and_time_to_train_use_the_slower_pipeline_stage():
    """A pipeline's step ends with its slowest stage. GPT-2 small's last stage carries the LM head
    (2·B·T·d·V FLOPs, about 4.5 layers' worth), so on 4 stages the last is the slower: the MFU
    and the time to train are the same whichever stage is priced, and equal the model FLOPs over
    devices · peak · the last stage's step (the definition: Narayanan et al. 2021, Sec. 5.1)."""
    m = symgpt.load("gpt2-small", B=8, T=1024)
    o = dict(pp=4, dp=2, microbatches=8, peak=989 * 10**12, link_bandwidth=450 * 10**9,
             node_bandwidth=50 * 10**9, precision="mixed-bf16")
    first, last = (m.quantity("time.step", stage=s, **o).value for s in ("first", "last"))
    assert last > first
    model_flops = m.quantity("flops.train", per="batch", hardware=False).value * 8 * 2   # m · dp batches
    for stage in ("first", "last"):
        assert m.quantity("time.mfu_cluster", stage=stage, **o).value == model_flops / (8 * 989 * 10**12 * last)
        tokens = 10**9
        steps = sympy.Rational(tokens, 8 * 8 * 2 * 1024)
        assert m.quantity("time.to_train", tokens=tokens, stage=stage, **o).value == steps * last
    one = dict(o, pp=1)                                             # no pipeline: the one stage
    assert m.quantity("time.mfu_cluster", **one).value == model_flops / (2 * 989 * 10**12 *
                                                                         m.quantity("time.step", **one).value)


def test_slower_stage_decided_symbolically():
    """With every size a positive symbol the last stage of GPT-2 is still provably the slower
    (it holds the layers' share and the head; the first stage the layers' share and a lookup of
    no FLOPs): the MFU of the first stage's pricing is the last stage's, symbol for symbol."""
    m = symgpt.load("gpt2")
    o = dict(pp=2, microbatches=4, peak=10**15, link_bandwidth=10**11, node_bandwidth=10**10)
    first, last = (m.quantity("time.mfu_cluster", stage=s, **o).expr for s in ("first", "last"))
    assert not first.has(sympy.Max) and sympy.simplify(first - last) == 0
    step_last = m.quantity("time.step", stage="last", **o).expr
    flops = m.quantity("flops.train", per="batch", hardware=False).expr * 4
    assert sympy.simplify(first - flops / (2 * 10**15 * step_last)) == 0


def test_larger_stage_decides_by_value_or_by_sign():
    """One decision for the busier/slower end stage (plan, time, the report's figures use it)."""
    from symgpt.derive.layout import larger_stage

    assert larger_stage(3, 5) == "last" and larger_stage(5, 3) == "first" and larger_stage(4, 4) == "first"
    assert larger_stage(d, d + V) == "last"           # the head on the last stage: positive for all sizes
    assert larger_stage(L * d, L * d) == "first"
    assert larger_stage(d, T) is None                 # which is larger depends on the sizes
