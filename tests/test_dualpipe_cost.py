"""DualPipe priced by ``symgpt memory`` (DeepSeek-V3 technical report, arXiv 2412.19437, Sec. 3.2.1 and
Table 2: parameters 2× per device, activations of pp + 1 micro-batches). Oracles worked by hand for
GPT-2 small (d = 768, L = 12, V = 50,257, T_max = 1,024; a tied head) on pp = 4: rank 0 holds stage 0
(layers 0-2, with the embeddings) and stage 3 (layers 9-11, with the final norm and the head)."""

import json
import subprocess
import sys

import pytest
import sympy

import symgpt

d, L, V, T_MAX = 768, 12, 50257, 1024
BASE = ["gpt2-small", "--pp", "4", "--microbatches", "8", "--schedule", "dualpipe"]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def _exact(out, name):
    q = out[name]
    return sympy.Rational(q.get("exact_value", q["value"]))


@pytest.mark.parametrize("stage", ["first", "last"])
def test_two_stages_of_parameters(stage):
    """Both end ranks hold 2·L/pp = 6 layers (12·d² + 13·d each: Q, K, V, output, two FFN
    matrices, their biases and two LayerNorms), the token and position embeddings and the
    final LayerNorm; the tied head is the token embedding itself, one matrix on the device."""
    r = _cli("memory", *BASE, "--stage", stage, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    layer = 12 * d * d + 13 * d
    params = 6 * layer + V * d + T_MAX * d + 2 * d
    assert params == 81_912_576
    assert _exact(out, "memory.weights") == 4 * params               # fp32
    assert _exact(out, "memory.gradients") == 4 * params
    assert _exact(out, "memory.optimizer") == 8 * params              # AdamW: two fp32 moments


def test_parameters_twice_the_layers_of_1f1b():
    """Table 2: DualPipe's parameters per device are 2× 1F1B's (the layers; the end parts once)."""
    m = symgpt.load("gpt2-small")
    dual = m.quantity("memory.weights", pp=4, microbatches=8, schedule="dualpipe").expr
    one = m.quantity("memory.weights", pp=4, microbatches=8).expr      # 1F1B, first stage
    sym = {x.name: x for x in (dual + one).free_symbols}
    Ls, ds = sym["L"], sym["d"]
    layers = lambda e: sympy.expand(e).coeff(Ls)                       # noqa: E731 -- the stack's part
    assert sympy.expand(layers(dual) - 2 * layers(one)) == 0
    assert layers(one) != 0 and ds in layers(one).free_symbols


def test_activations_pp_plus_one():
    """Rank 0 at its peak (the order of DualPipe's public implementation, pp = 4, m = 8): step 1
    runs 2 forwards of direction 0, step 2 one more of each direction, step 3 B, W and F of
    direction 1 (still one in flight there), step 4's first F&B adds a fourth of direction 0 while
    its backward frees one of direction 1 -- 4 micro-batches through stage 0 and 1 through stage 3:
    5 = pp + 1 (Table 2). So the layers hold 5 micro-batches of L/4 layers, 5/4 of one micro-batch
    of the whole stack; the embeddings 4 micro-batches, the final norm, head and loss one."""
    m = symgpt.load("gpt2-small")
    one = dict(m.quantity("memory.activations").breakdown)             # one device, one micro-batch
    for stage in ("first", "last"):
        dual = dict(m.quantity("memory.activations", pp=4, microbatches=8, schedule="dualpipe",
                               stage=stage).breakdown)
        assert set(dual) == set(one)
        for path, e in one.items():
            k = sympy.Rational(5, 4) if path.startswith("blocks/") else (4 if path.startswith("embedding/") else 1)
            assert sympy.expand(dual[path] - k * e) == 0, path
    r = _cli("memory", *BASE, "--json")
    assert r.returncode == 0, r.stderr
    assert "Table 2: pp + 1" in r.stdout and "5 micro-batches" in r.stdout


@pytest.mark.parametrize("p,m", [(2, 4), (4, 16), (8, 16)])
def test_peak_is_pp_plus_one_across_sizes(p, m):
    from symgpt.derive.layout import dualpipe_in_flight

    for r in (0, p - 1):
        n = dualpipe_in_flight(p, m, r)
        assert n["stack"] * p == p + 1                                  # Table 2
        assert (n["pre"], n["post"]) == (p, 1)


def test_symbolic_in_flight_is_the_run_across_a_range():
    """A plan's degrees are symbols: Layout.in_flight then gives Table 2's pp + 1 (pp through the
    embedding's stage, one through the head's); the run gives exactly that for every even pp up to 16
    and every even m from 2·pp to 4·pp + 8, on both end ranks."""
    from symgpt.derive.layout import dualpipe_in_flight, layout

    p_, m_ = sympy.symbols("p m", positive=True, integer=True)
    lay = layout(pp=p_, microbatches=m_, schedule="dualpipe")
    for p in range(2, 17, 2):
        for m in range(2 * p, 4 * p + 9, 2):
            for r in (0, p - 1):
                n = dualpipe_in_flight(p, m, r)
                assert {k: lay.in_flight(k).subs(p_, p) for k in n} == n, (p, m, r)


@pytest.mark.parametrize("args,words", [
    (["--pp", "3", "--microbatches", "8"], "even pp"),
    (["--pp", "4", "--microbatches", "6"], "at least 2·pp = 8"),
    (["--pp", "4", "--microbatches", "8", "--vp", "2"], "interleaves"),
])
def test_refusals(args, words):
    r = _cli("memory", "gpt2-small", "--schedule", "dualpipe", *args)
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and words in r.stderr
    assert r.stderr.count("\n") == 1


def test_plan_rows_are_the_single_derivations():
    """plan --schedule 1f1b,dualpipe: every DualPipe row (even pp, m even and >= 2·pp) equals memory.total,
    time.step (compute + comm + the run's bubble), comm.total and MFU derived for that one strategy; the
    1F1B rows are the plan without DualPipe, row for row."""
    import random

    from symgpt.derive.options import Machine, Training
    from symgpt.derive.steptime import Cluster
    from symgpt.sweep.plan import Search, plan

    m = symgpt.load("gpt2-small", T=1024)
    peak, link, node = 312 * 10**12, 300 * 10**9, 25 * 10**9
    cluster = Cluster(Machine(peak=peak, device_memory=80 * 10**9, link_bandwidth=link, node_bandwidth=node,
                              node_size=4), training=Training(precision="mixed-bf16"))
    search = Search(zero=(0, 1), vps=(1,), microbatch_sizes=(1, 2), recompute=("none", "full"),
                    schedules=("1f1b", "dualpipe"))
    r = plan(m, 8, 32, cluster, search, top=10**6)
    base = plan(m, 8, 32, cluster, Search(zero=(0, 1), vps=(1,), microbatch_sizes=(1, 2), recompute=("none", "full")),
                top=10**6)
    assert [(x["time"], x["memory"]) for x in r.rows] == sorted((x["time"], x["memory"]) for x in r.rows)
    assert [{k: v for k, v in x.items() if k != "schedule"} for x in r.rows if x["schedule"] == "1f1b"] == base.rows
    dual = [x for x in r.rows if x["schedule"] == "dualpipe"]
    assert {x["pp"] for x in dual} == {2, 4}                       # even pp dividing L = 12 and 8 devices
    assert all(x["pp"] % 2 == 0 and x["microbatches"] % 2 == 0 and x["microbatches"] >= 2 * x["pp"] for x in dual)
    rng = random.Random(7)
    sample = [rng.choice([x for x in dual if x["pp"] == p]) for p in (2, 4, 4)] + rng.sample(dual, 2)
    for row in sample:
        one = m.with_(B=row["microbatch"])
        o = dict(precision="mixed-bf16", recompute=row["recompute"], zero=row["zero"], sp=row["sp"], tp=row["tp"],
                 pp=row["pp"], dp=row["dp"], cp=row["cp"], ep=row["ep"], microbatches=row["microbatches"],
                 schedule="dualpipe")
        t = dict(peak=peak, link_bandwidth=link, node_bandwidth=node, node_size=4)
        assert row["memory"] == max(one.quantity("memory.total", **o, stage=s).value for s in ("first", "last"))
        step = one.quantity("time.step", **o, **t).value
        assert row["time"] == step
        parts = {q: one.quantity(f"time.{q}", **o, **t).value for q in ("bubble", "compute")}
        assert row["bubble"] == parts["bubble"] / parts["compute"]
        assert row["comm_bytes"] == one.quantity("comm.total", **o).value
        assert row["mfu"] == one.quantity("time.mfu_cluster", **o, **t).value


def test_plan_span_is_table2_where_it_holds():
    """The plan's longest path through DualPipe's run (on arrays of strategies at once), on stages alike
    with T_F = T_B and T_W <= T_B: the device's m·(F + B + W) plus Table 2's (pp/2 − 1)(F&B + B − 3W)."""
    import numpy as np

    from symgpt.derive.pipeline_zb import dualpipe_span, paper_bubble

    for p, m in ((4, 8), (6, 12), (8, 16), (8, 20)):
        tf = tb = np.array([2.0, 6.0])
        tw = np.array([1.0, 3.0])
        span = dualpipe_span(p, m, [[tf, tb, tw]] * p)
        for i in range(2):
            f, b, w = int(tf[i]), int(tb[i]), int(tw[i])
            assert int(span[i]) == span[i] == m * (f + b + w) + int(paper_bubble("dualpipe", p, f, b, w, f + b + w))


def test_default_unchanged():
    """The other schedules' memory is as before: the first stage of 1F1B holds L/pp layers, the
    embeddings and no head (a tied head's copy sits on the last stage)."""
    r = _cli("memory", "gpt2-small", "--pp", "4", "--microbatches", "8", "--json")
    assert r.returncode == 0, r.stderr
    layer = 12 * d * d + 13 * d
    assert _exact(json.loads(r.stdout), "memory.weights") == 4 * (3 * layer + V * d + T_MAX * d)


# --- time: compute and bubble --------------------------------------------------------------------
PEAK = 10**15
TIME = dict(pp=4, microbatches=8, schedule="dualpipe", peak=PEAK, link_bandwidth=300e9, node_bandwidth=25e9)
Bv, Tv = 1, 1024


def _kaplan_layer():
    """One GPT-2 layer under Kaplan et al. 2020's counting (embeddings and head out, Q·Kᵀ counted,
    A·V not), per micro-batch of B·T tokens: forward 24·B·T·d² + 2·B·T²·d; input gradient the
    linears' 24·B·T·d² and Q·Kᵀ's two matmuls 4·B·T²·d; weight gradient the linears' 24·B·T·d²."""
    f = 24 * Bv * Tv * d * d + 2 * Bv * Tv * Tv * d
    b = 24 * Bv * Tv * d * d + 4 * Bv * Tv * Tv * d
    w = 24 * Bv * Tv * d * d
    return f, b, w


def test_table2_bubble_on_stage_times():
    """The run on one (F, B, W) per stage, all alike with T_F = T_B (where Table 2 holds):
    (pp/2 − 1)(F&B + B − 3W), B the full backward, F&B = F + B + W (no overlap)."""
    from symgpt.derive.pipeline_zb import bubble, schedule

    for p, m in ((4, 8), (8, 16), (6, 12)):
        tf, tb, tw = 2, 2, 1
        slots = schedule(p, m, "dualpipe", stage_times=[(tf, tb, tw)] * p)
        assert bubble(slots, "dualpipe") == (p // 2 - 1) * ((tf + tb + tw) + (tb + tw) - 3 * tw)


def test_compute_two_stages_m_over_two_each():
    """Rank 0 runs m/2 = 4 micro-batches through stage 0 and 4 through stage 3: 8 micro-batches of
    L/pp = 3 layers, forward + input gradient + weight gradient (Kaplan's counting)."""
    m = symgpt.load("gpt2-small").with_(B=Bv, T=Tv)
    f, b, w = _kaplan_layer()
    for stage in ("first", "last"):
        q = m.quantity("time.compute", stage=stage, convention="kaplan", **TIME)
        assert sympy.Rational(q.value) == sympy.Rational(8 * 3 * (f + b + w), PEAK)


def test_bubble_from_the_run_on_hand_worked_times():
    """Kaplan's counting leaves every stage alike (3 layers, nothing else): the bubble is the run's on
    the hand-worked per-stage times (T_F < T_B here, so not Table 2's closed form), and the step
    (compute + bubble) is the run's length on both end ranks."""
    from symgpt.derive.pipeline_zb import schedule

    f, b, w = (sympy.Rational(3 * x, PEAK) for x in _kaplan_layer())
    slots = schedule(4, 8, "dualpipe", f, b, w)
    span = max(s.end for s in slots)
    m = symgpt.load("gpt2-small").with_(B=Bv, T=Tv)
    for stage in ("first", "last"):
        c = sympy.Rational(m.quantity("time.compute", stage=stage, convention="kaplan", **TIME).value)
        bub = sympy.Rational(m.quantity("time.bubble", stage=stage, convention="kaplan", **TIME).value)
        assert c + bub == span
        assert c == 8 * (f + b + w)


def test_bubble_with_the_head_on_the_last_stage():
    """The default counting puts the LM head's 2·B·T·d·V forward, input gradient and weight gradient
    on stage 3 alone: the run on those stage times, worked by hand."""
    from symgpt.derive.pipeline_zb import schedule

    f = 24 * Bv * Tv * d * d + 4 * Bv * Tv * Tv * d       # Q·Kᵀ and A·V
    b = 24 * Bv * Tv * d * d + 8 * Bv * Tv * Tv * d
    w = 24 * Bv * Tv * d * d
    head = 2 * Bv * Tv * d * V
    mid = tuple(sympy.Rational(3 * x, PEAK) for x in (f, b, w))
    last = tuple(sympy.Rational(3 * x + head, PEAK) for x in (f, b, w))
    slots = schedule(4, 8, "dualpipe", stage_times=[mid, mid, mid, last])
    span = max(s.end for s in slots)
    m = symgpt.load("gpt2-small").with_(B=Bv, T=Tv)
    c = sympy.Rational(m.quantity("time.compute", **TIME).value)
    assert c == 4 * sum(mid) + 4 * sum(last)                 # m/2 through stage 0, m/2 through stage 3
    assert c + sympy.Rational(m.quantity("time.bubble", **TIME).value) == span


def test_bubble_needs_the_sizes():
    m = symgpt.load("gpt2-small")
    with pytest.raises(symgpt.SymgptError, match="bind every size"):
        m.quantity("time.bubble", **TIME)


# --- communication: hand-worked bytes on the end rank -------------------------------------------
# GPT-2 small on pp = 4, dp = 2, m = 8, mixed bf16 (bf16 activations and gradients): rank 0 holds 6
# layers, the embeddings and the final norm (test_two_stages_of_parameters), N parameters.
N = 6 * (12 * d * d + 13 * d) + V * d + T_MAX * d + 2 * d
COMM = ["gpt2-small", "--set", "B=1", "--set", "T=1024", "--pp", "4", "--microbatches", "8", "--dp", "2",
        "--schedule", "dualpipe", "--precision", "mixed-bf16", "--json"]


def _parts(out, name):
    return {k: sympy.Rational(v.get("exact_value", v["value"])) for k, v in out[name]["breakdown"].items()}


@pytest.mark.parametrize("stage", ["first", "last"])
def test_comm_hand_worked_bytes(stage):
    """An end rank sends m/2 = 4 micro-batches' activations (B·T·d bf16 = 1·1024·768·2 bytes) from its
    first stage and 4 gradients from its last; its 2-stage gradient (N bf16) is all-reduced over dp = 2
    (ring: 2·(1/2)·N·2 bytes) and summed with its partner's copy (ranks r and 3 − r: 2·(1/2)·N·2);
    no tied-embedding all-reduce: the end ranks hold embedding and head as one matrix."""
    r = _cli("comm", *COMM, "--stage", stage)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    act = 1 * 1024 * 768 * 2
    assert _parts(out, "comm.pp") == {
        "pp/blocks activations sent forward": 4 * act, "pp/blocks gradients sent backward": 4 * act,
        "pp/gradient all-reduce of each stage's two copies (rank r and pp − 1 − r)": 2 * N}
    assert _parts(out, "comm.dp") == {"dp/gradient all-reduce": 2 * N}
    assert _exact(out, "comm.total") == 8 * act + 4 * N
    assert any("not modelled" in n and "DualPipe" in n for n in out["comm.total"]["notes"])


def test_comm_same_point_to_point_as_1f1b_split_both_ways():
    """An end rank of 1F1B sends all m activations one way (first stage) or all m gradients (last);
    DualPipe's sends half of each: the same bytes over the link, both directions used."""
    one = json.loads(_cli("comm", *[a for a in COMM if a not in ("--schedule", "dualpipe")]).stdout)
    dual = json.loads(_cli("comm", *COMM).stdout)
    p2p = lambda out: sum(v for k, v in _parts(out, "comm.pp").items() if " sent " in k)  # noqa: E731
    assert p2p(one) == p2p(dual) == 8 * 1 * 1024 * 768 * 2


def test_comm_zero1_sums_the_shards():
    """ZeRO-1 (dp = 2): the gradient reduce-scattered (N/2 · 2 bytes sent), the weights all-gathered
    (the same in bf16), and each stage's two copies summed on this rank's shard only (N/2 bf16)."""
    r = _cli("comm", *COMM, "--zero", "1")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert _parts(out, "comm.dp") == {"dp/gradient reduce-scatter": N, "dp/weight all-gather": N}
    assert _parts(out, "comm.pp")["pp/gradient all-reduce of each stage's two copies (rank r and pp − 1 − r)"] == N


def test_comm_tensor_parallel_m_over_two_through_each_stage():
    """tp = 2: each of the 2·L/pp = 6 layers on the rank sees m/2 = 4 micro-batches (its two stages, one
    per direction): per layer and micro-batch, Megatron's two forward all-reduces (attention output, FFN
    output) and two backward (the inputs of QKV and of the FFN), each B·T·d bf16 sent 2·(1/2) times."""
    r = _cli("comm", *COMM, "--tp", "2")
    assert r.returncode == 0, r.stderr
    parts = _parts(json.loads(r.stdout), "comm.tp")
    each = 4 * 6 * 1 * 1024 * 768 * 2
    for name in ("tp/blocks/attention/proj all-reduce (forward)", "tp/blocks/ffn/down all-reduce (forward)",
                 "tp/blocks/norms/attention all-reduce (backward)", "tp/blocks/norms/ffn all-reduce (backward)"):
        assert parts[name] == each, name


def test_comm_zero3_refuses_in_one_line():
    r = _cli("comm", *COMM, "--zero", "3")
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error: dualpipe") and r.stderr.count("\n") == 1


def test_time_step_is_compute_comm_bubble():
    """time.comm = each part's bytes over its group's link (pp spans 8 devices, dp 2: both inside a node
    of 8, so the 300 GB/s link); time.step = compute + comm + bubble (nothing overlapped)."""
    r = _cli("time", *COMM, "--peak", "1e15", "--link-bandwidth", "300e9", "--node-bandwidth", "25e9")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    act = 1 * 1024 * 768 * 2
    assert _exact(out, "time.comm") == sympy.Rational(8 * act + 4 * N, 300 * 10**9)
    assert _exact(out, "time.step") == sum(_exact(out, f"time.{q}") for q in ("compute", "comm", "bubble"))
    assert any("not modelled" in n for n in out["time.step"]["notes"])
    hidden = json.loads(_cli("time", *COMM, "--peak", "1e15", "--link-bandwidth", "300e9", "--node-bandwidth",
                             "25e9", "--overlap-dp").stdout)
    assert _exact(hidden, "time.comm") == sympy.Rational(8 * act + 2 * N, 300 * 10**9)   # dp hidden, copies not


def test_untied_head_both_matrices():
    """LLaMA-7B (untied; d = 4,096, d_ff = 11,008, V = 32,000, 32 layers of 4·d² attention + 3·d·d_ff
    SwiGLU + 2·d RMSNorm): rank 0 of pp = 4 holds 16 layers, the embedding, the head and the final
    norm -- with 8 layers it would hold 1F1B's first stage."""
    layer = 4 * 4096 ** 2 + 3 * 4096 * 11008 + 2 * 4096
    assert 32 * layer + 2 * 32000 * 4096 + 4096 == 6_738_415_616      # the released checkpoint's count
    r = _cli("memory", "llama-7b", "--pp", "4", "--microbatches", "8", "--schedule", "dualpipe", "--json")
    assert r.returncode == 0, r.stderr
    assert _exact(json.loads(r.stdout), "memory.weights") == 4 * (16 * layer + 2 * 32000 * 4096 + 4096)


def test_plan_graph_is_the_run():
    """The plan's forms of the run: the longest path through its graph (exact, in integers, and in
    floats over many steps at once) is the run's length (``pipeline_zb.schedule`` on the same stage
    times, a first, middle and last stage each with its own), and the micro-batches in flight read from
    each device's order are the run's."""
    import random
    from fractions import Fraction

    import numpy as np

    from symgpt.derive.layout import dualpipe_in_flight
    from symgpt.derive.pipeline_zb import dualpipe_held, dualpipe_span_exact, dualpipe_span_many, schedule

    rng = random.Random(5)
    for p, m in ((2, 4), (2, 10), (4, 8), (4, 14), (6, 12), (8, 16), (8, 22)):
        for _ in range(3):
            kinds = [[Fraction(rng.randint(0, 20), rng.randint(1, 4)) for _ in range(3)] for _ in range(3)]
            per = [kinds[0]] + [kinds[1]] * (p - 2) + [kinds[2]]
            slots = schedule(p, m, "dualpipe", stage_times=[tuple(sympy.Rational(x.numerator, x.denominator)
                                                                    for x in t) for t in per])
            span = max(s.end for s in slots)
            nine = [x for k in kinds for x in k]
            assert dualpipe_span_exact(p, m, nine) == span
            assert abs(dualpipe_span_many(p, m, np.array([[float(x)] for x in nine]))[0] - float(span)) <= 1e-12 * span
        for r, embedding in ((0, 0), (p - 1, 1)):
            n = dualpipe_in_flight(p, m, r)
            best, at, tops = dualpipe_held(p, m, r)
            assert (best, at[embedding], at[1 - embedding]) == (n["stack"] * p, n["pre"], n["post"]) and at == tops


@pytest.mark.parametrize("p", [4, 8])
def test_point_to_point_hand_count_per_rank(p):
    """A hand count over DualPipe's run (arXiv 2412.19437, Sec. 3.2.1; rank r holds stage r of the forward
    direction and stage p − 1 − r of the reverse one): a forward on any stage but the last sends an
    activation on, an input gradient on any stage but the first sends a gradient back. End ranks send
    m/2 of each -- what comm.pp prices, B·T·d bf16 each -- and middle ranks m of each, which the answer
    names as not priced."""
    from symgpt.derive.pipeline_zb import schedule

    m_ = 2 * p + 4
    sent = {r: [0, 0] for r in range(p)}
    for s in schedule(p, m_, "dualpipe"):
        stage = s.device if s.chunk == 0 else p - 1 - s.device
        if s.kind == "F" and stage < p - 1:
            sent[s.device][0] += 1
        if s.kind in ("B", "BW") and stage > 0:
            sent[s.device][1] += 1
    assert sent[0] == sent[p - 1] == [m_ // 2, m_ // 2]
    assert all(sent[r] == [m_, m_] for r in range(1, p - 1))
    args = [a if a not in ("4", "8") else {"4": str(p), "8": str(m_)}[a] for a in COMM] + ["--set", "L=24"]
    out = json.loads(_cli("comm", *args).stdout)
    act = 1 * 1024 * 768 * 2
    parts = _parts(out, "comm.pp")
    assert (parts["pp/blocks activations sent forward"], parts["pp/blocks gradients sent backward"]) == \
        (sent[0][0] * act, sent[0][1] * act)
    note = next(n for n in out["comm.pp"]["notes"] if n.startswith("DualPipe"))
    assert "a middle rank (0 < r < pp − 1) sends m of each" in note and "not priced" in note
