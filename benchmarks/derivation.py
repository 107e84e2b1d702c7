"""Counting parameters + forward FLOPs (B = 1, T = T_max) of GPT-2-small and GPT-3-175B: symgpt's
derivation vs building the model with transformers on the meta device and counting with
``FlopCounterMode`` (both counts are checked to agree)."""

from __future__ import annotations

from .common import child, med, met, ratio, say, secs

MODELS = {"gpt2-small": dict(L=12, d=768, h=12, T=1024), "gpt3-175b": dict(L=96, d=12288, h=96, T=2048)}

DERIVE = """
import json, time
import sympy, networkx, numpy, symgpt, symgpt.model.model, symgpt.ops, symgpt.families
symgpt.ops.registered_kinds(), symgpt.families.families()  # every op and family (they load lazily)
name, T = {name!r}, {T}
t0 = time.perf_counter()
m = symgpt.load(name, B=1, T=T)
p, f = m.params.value, m.quantity("flops.forward").value
t1 = time.perf_counter()
m = symgpt.load(name, B=1, T=T)                     # again: the graph and breakdowns are cached
p2, f2 = m.params.value, m.quantity("flops.forward").value
t2 = time.perf_counter()
print(json.dumps(dict(params=int(p), flops=int(f), cold=t1 - t0, warm=t2 - t1)))
"""

META = """
import json, time
t0 = time.perf_counter()
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging
logging.set_verbosity_error()
t1 = time.perf_counter()
times = []
for _ in range({runs}):
    s = time.perf_counter()
    cfg = GPT2Config(n_layer={L}, n_embd={d}, n_head={h}, n_positions={T}, vocab_size=50257,
                     attn_implementation="eager")       # SDPA's mask check calls .item(): not on meta
    with torch.device("meta"):
        model = GPT2LMHeadModel(cfg)
    n = sum(p.numel() for p in model.parameters())
    idx = torch.zeros((1, {T}), dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        model(input_ids=idx, attention_mask=torch.ones_like(idx), use_cache=False)
    times.append(time.perf_counter() - s)
    del model
print(json.dumps(dict(params=int(n), flops=int(fc.get_total_flops()), imports=t1 - t0, times=times)))
"""


def measure(opts) -> dict:
    say("derivation ...")
    derive = {name: dict(cold=[], warm=[]) for name in MODELS}
    for _ in range(2 * opts.runs):  # interleaved, so that a change of load hits both models alike
        for name, cfg in MODELS.items():
            r = child(DERIVE.format(name=name, T=cfg["T"]))
            derive[name]["cold"].append(r["cold"])
            derive[name]["warm"].append(r["warm"])
            derive[name].update(params=r["params"], flops=r["flops"])
    meta = {}
    for name, cfg in MODELS.items():
        say(f"meta-device tracing of {name} ...")
        meta[name] = child(META.format(runs=opts.heavy_runs, **cfg))
    return {"derive": derive, "meta": meta}


def rows(res, ctx) -> list[tuple]:
    derive, meta = res["derive"], res["meta"]
    small, big = med(derive["gpt2-small"]["cold"]), med(derive["gpt3-175b"]["cold"])
    trace = {n: med(meta[n]["times"]) for n in MODELS}
    return [
        ("GPT-2-small: params + forward FLOPs", secs(small),
         f"{secs(trace['gpt2-small'])} (meta build + FlopCounterMode)",
         ratio(trace["gpt2-small"], small) + " faster", "", ""),
        ("GPT-3-175B: params + forward FLOPs", secs(big),
         f"{secs(trace['gpt3-175b'])} (meta build + FlopCounterMode)",
         ratio(trace["gpt3-175b"], big) + " faster", "≥ 10× faster", met(trace["gpt3-175b"] >= 10 * big)),
        ("GPT-3-175B vs GPT-2-small derivation", secs(big), secs(small), ratio(big, small),
         "≤ 1.2×", met(big <= 1.2 * small)),
    ]


def details(res, ctx) -> list[str]:
    derive, meta, runs = res["derive"], res["meta"], ctx["opts"].runs
    agree = all(derive[n]["params"] == meta[n]["params"] and derive[n]["flops"] == meta[n]["flops"]
                for n in MODELS)
    return [
        f"- Derivation: {2 * runs} runs per model, interleaved (GPT-2-small, GPT-3-175B, GPT-2-small, "
        "...), each in a fresh interpreter; SymPy, networkx and symgpt are imported first, "
        "then `load(name, B=1, T=T_max)`, `.params.value` and `.quantity(\"flops.forward\").value` are timed "
        "(the cold first call: the graph is built and every rule derived). Warm (a second load in the same "
        f"process, cached graph): {secs(med(derive['gpt2-small']['warm']))} (GPT-2-small), "
        f"{secs(med(derive['gpt3-175b']['warm']))} (GPT-3-175B). The block is derived once and costed "
        "×L, so the sizes never enter the derivation.",
        f"- Meta-device tracing: `GPT2LMHeadModel(GPT2Config(n_layer, n_embd, n_head, n_positions, "
        f"vocab_size=50257))` built under `torch.device(\"meta\")`, `sum(p.numel())`, then one forward of "
        f"(1, T) ids under `FlopCounterMode` (eager attention). Imports of torch + transformers, not "
        f"counted above: {secs(meta['gpt2-small']['imports'])}. Runs after the first reuse one process "
        "(warm: favourable to tracing).",
        f"- The counts agree: {'yes' if agree else '**NO**'} — symgpt's params and default-convention "
        "forward FLOPs equal the traced ones: "
        + "; ".join(f"{n}: {derive[n]['params']:,} params, {derive[n]['flops']:,} FLOPs "
                    f"(traced: {meta[n]['params']:,}, {meta[n]['flops']:,})" for n in MODELS) + ".",
    ]
