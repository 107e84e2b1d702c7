"""The zero-bubble schedules priced: ``symgpt time`` and ``symgpt memory`` with --schedule zb-h1 and
zb-h2. Oracles worked by hand for GPT-2 small (d = 768, L = 12) under the default convention
(matmuls only, 2 FLOPs per multiply-add, full T×T attention): per layer a forward of
24·B·T·d² (the linears' 12·d² weights) + 4·B·T²·d (Q·Kᵀ and A·V); an input gradient of the same
linears' 24·B·T·d² + 8·B·T²·d (two matmuls for each attention matmul); a weight gradient of
24·B·T·d² (the linears only). The papers' bubbles (Qi et al. 2023, Table 1) on those times."""

import json
import subprocess
import sys

import pytest
import sympy

B, T, d, L, PEAK = 1, 1024, 768, 12, 10**15
BASE = ["gpt2-small", "--set", f"B={B}", "--set", f"T={T}", "--pp", "4", "--microbatches", "8",
        "--peak", str(PEAK), "--link-bandwidth", "300e9", "--node-bandwidth", "25e9", "--json"]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def _exact(out, name):
    q = out[name]
    return sympy.Rational(q.get("exact_value", q["value"]))


def _times(p=4):
    layers = sympy.Rational(L, p)
    tf = layers * (24 * B * T * d**2 + 4 * B * T**2 * d) / PEAK
    tb = layers * (24 * B * T * d**2 + 8 * B * T**2 * d) / PEAK
    tw = layers * 24 * B * T * d**2 / PEAK
    return tf, tb, tw


@pytest.mark.parametrize("kind", ["1f1b", "zb-h1", "zb-h2"])
def test_bubble_from_the_op_graph(kind):
    r = _cli("time", *BASE, "--schedule", kind)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    tf, tb, tw = _times()
    assert _exact(out, "time.compute") == 8 * (tf + tb + tw)      # the first stage: embedding lookup free
    want = {"1f1b": 3 * (tf + tb + tw), "zb-h1": 3 * (tf + tb - tw), "zb-h2": 3 * (tf + tb - 2 * tw)}[kind]
    assert _exact(out, "time.bubble") == want


def test_memory_in_flight():
    acts = {}
    for kind in ("1f1b", "zb-h1", "zb-h2"):
        r = _cli("memory", *BASE[:BASE.index("--peak")], "--schedule", kind, "--json")
        assert r.returncode == 0, r.stderr
        acts[kind] = _exact(json.loads(r.stdout), "memory.activations")
    # the first stage's layers: 1F1B and ZB-H1 hold 4 micro-batches, ZB-H2 2·4 − 1 = 7 (Table 1)
    assert acts["zb-h1"] == acts["1f1b"]
    assert acts["zb-h2"] * 4 == acts["1f1b"] * 7


def test_default_unchanged_and_refusals():
    plain = _cli("time", *BASE)
    assert plain.stdout == _cli("time", *BASE, "--schedule", "1f1b").stdout
    for args, needle in [(["--schedule", "zb-h2", "--microbatches", "6"], "at least that many"),
                         (["--schedule", "zb-h1", "--vp", "2"], "one chunk per stage")]:
        argv = BASE + args
        if "--microbatches" in args:
            i = BASE.index("--microbatches")
            argv = BASE[:i] + BASE[i + 2:] + args
        r = _cli("time", *argv)
        assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_plan_searches_the_listed_schedules():
    """Every row of a plan over 1F1B, ZB-H1 and ZB-H2 equals the quantities derived for that one
    strategy and schedule; the zero-bubble rows run one chunk per stage, ZB-H2's with m >= 2pp − 1."""
    import random

    import symgpt
    from symgpt.derive.options import Machine, Training
    from symgpt.derive.steptime import Cluster
    from symgpt.sweep.plan import Search, plan

    m = symgpt.load("gpt3-1.3b", T=2048)
    peak, link, node = 312 * 10**12, 300 * 10**9, 25 * 10**9
    cluster = Cluster(Machine(peak=peak, device_memory=80 * 10**9, link_bandwidth=link, node_bandwidth=node,
                              node_size=8), training=Training(precision="mixed-bf16"))
    search = Search(zero=(1,), vps=(1, 2), microbatch_sizes=(1, 2), schedules=("1f1b", "zb-h1", "zb-h2"))
    r = plan(m, 16, 64, cluster, search, top=10**6)
    base = plan(m, 16, 64, cluster, Search(zero=(1,), vps=(1, 2), microbatch_sizes=(1, 2)), top=10**6)
    times = [(row["time"], row["memory"]) for row in r.rows]
    assert times == sorted(times) and r.fitting == len(r.rows)
    kinds = {row["schedule"] for row in r.rows}
    assert kinds == {"1f1b", "zb-h1", "zb-h2"}
    for row in r.rows:
        if row["schedule"] != "1f1b":
            assert row["vp"] == 1 and row["pp"] > 1
        if row["schedule"] == "zb-h2":
            assert row["microbatches"] >= 2 * row["pp"] - 1
    # the 1F1B rows are the plan without the new schedules, row for row
    assert [{k: v for k, v in row.items() if k != "schedule"} for row in r.rows if row["schedule"] == "1f1b"] == base.rows
    assert r.rows[0]["time"] <= base.rows[0]["time"]
    rng = random.Random(29)
    sample = [rng.choice([row for row in r.rows if row["schedule"] == k]) for k in ("zb-h1", "zb-h2")]
    sample += rng.sample([row for row in r.rows if row["schedule"] != "1f1b"], 4)
    for row in sample:
        one = m.with_(B=row["microbatch"])
        o = dict(precision="mixed-bf16", recompute=row["recompute"], zero=row["zero"], sp=row["sp"], tp=row["tp"],
                 pp=row["pp"], vp=row["vp"], dp=row["dp"], cp=row["cp"], ep=row["ep"],
                 microbatches=row["microbatches"], schedule=row["schedule"])
        t = dict(peak=peak, link_bandwidth=link, node_bandwidth=node)
        mem = [one.quantity("memory.total", **o, stage=s).value for s in ("first", "last")]
        step = {s: one.quantity("time.step", **o, **t, stage=s).value for s in ("first", "last")}
        slow = "first" if step["first"] >= step["last"] else "last"
        assert row["memory"] == max(mem) and row["time"] == max(step.values())
        parts = {q: one.quantity(f"time.{q}", **o, **t, stage=slow).value for q in ("bubble", "compute")}
        assert row["bubble"] == parts["bubble"] / parts["compute"]
        assert row["mfu"] == one.quantity("time.mfu_cluster", **o, **t, stage=slow).value
