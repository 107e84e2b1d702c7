"""symgpt's inference quantities against llm-analysis (a numeric peer), on the same configs.

    python benchmarks/inference_llm_analysis.py [-o benchmarks/INFERENCE.md]

llm-analysis 0.2.2 pins transformers < 5, so it runs in a virtual environment of its own,
``benchmarks/.envs/llm-analysis``, which ``benchmarks/envs.py`` creates and installs into on
first use (the same one ``benchmarks/run.py --only peers`` uses). Both run on the same configuration (B = 4 sequences, a prompt of 512
tokens, 32 new tokens, 16-bit weights and activations, an A100 SXM 80 GB: 312 TFLOP/s, 2,039
GB/s in both tools' profiles). For each quantity the table gives both values, the relative
difference and why they differ: each count's difference is predicted from the two tools'
formulas and marked "exact" when the prediction equals the measured difference. Times are wall-clock per call in a fresh interpreter (imports
included), median of --runs runs. No test asserts anything here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
B, P, G = 4, 512, 32

# (symgpt model, llm-analysis model config)
CASES = (("tests/configs/gpt2.json", "gpt2"), ("tests/configs/opt-125m.json", "facebook_opt-125m"),
         ("tests/configs/llama-2-7b.json", "NousResearch_Llama-2-7b-hf"))

# Why the counts differ, as exact differences (symgpt - llm-analysis) with their reasons; the
# script checks each against the measured difference and marks it "exact" when they agree.
_MLP = lambda d, dff: 3 * d * dff - 2 * d * 4 * d   # noqa: E731  SwiGLU's three matrices vs a 4d MLP


def _explain(case: str, key: str):
    """(symgpt - llm-analysis as this explanation predicts it, or None; the reason)."""
    Bq, Pq = B, P
    if key == "kv_cache":
        return 0, "2·L·h_kv·d_head·bytes per token, for the P + G tokens of each sequence"
    if key == "weights":
        if case in ("gpt2", "opt-125m"):
            L, d = 12, 768
            rows = 1024 if case == "gpt2" else 2048 + 2          # OPT keeps 2 extra position rows
            return (rows * d + 9 * d * L + 2 * d * L + d) * 2, (
                "llm-analysis counts no position table (T_max·d), no linear biases (9d per layer) and "
                "no LayerNorm biases (2d per layer + d)")
        L, d, V, dff = 32, 4096, 32000, 11008
        return (V * d + L * _MLP(d, dff)) * 2, (
            "llm-analysis counts one embedding table (Llama-2's untied LM head, V·d, left out) and a "
            "2-matrix MLP of width 4d = 16,384 instead of SwiGLU's three matrices of 11,008")
    if key == "prefill":
        if case != "llama-2-7b":
            return 0, "24·B·s·d² + 4·B·s²·d per layer plus the LM head: GPT-2's and OPT's matmuls"
        return 2 * Bq * Pq * 32 * _MLP(4096, 11008), (
            "llm-analysis's MLP is 16·B·s·d² (two matrices of 4d); Llama-2's SwiGLU is 6·B·s·d·d_ff")
    if key == "decode":
        L, d = (32, 4096) if case == "llama-2-7b" else (12, 768)
        extra = 2 * Bq * L * _MLP(4096, 11008) if case == "llama-2-7b" else 0
        return 4 * Bq * L * Pq * d + extra, (
            "llm-analysis evaluates its forward formula at seq_len = 1: the new token attends to 1 "
            "position, not the P + 1 the cache holds (4·B·L·P·d)" + (
                "; and its 4d MLP (2·B·L·(3·d·d_ff - 8d²))" if extra else ""))
    return None, ("a modelling choice, not a count: llm-analysis takes G steps of one memory-bound "
                  "latency each (weights + the KV cache of P + G tokens, every step alike); symgpt "
                  "G - 1 steps (the prefill yields the first token), a per-op roofline over the "
                  "growing cache (P, ..., P + G - 2), activation reads and writes counted")


def _symgpt_child(path: str) -> dict:
    import symgpt

    m = symgpt.load(ROOT / path, B=B, T=P)
    opts = dict(hardware="a100-80gb")
    gen = m.quantity("inference.generate.time", prompt=P, generate=G, **opts).value
    ttft = m.quantity("inference.ttft", prompt=P, generate=G, **opts).value
    return {"kv_cache": int(m.with_(T=P + G).quantity("inference.kv_cache").value),
            "weights": int(m.quantity("inference.weights").value),
            "prefill": int(m.quantity("inference.prefill.flops").value),
            "decode": int(m.quantity("inference.decode.flops").value),
            "decode_time": float(gen - ttft)}


def _peer_child(name: str) -> dict:
    import llm_analysis.analysis as a

    r = a.infer(model_name=name, gpu_name="a100-sxm-80gb", dtype_name="w16a16e16", batch_size_per_gpu=B,
                seq_len=P, num_tokens_to_generate=G, log_level="ERROR")
    return {"kv_cache": int(r["kv_cache_memory_per_gpu"]), "weights": int(r["weight_memory_per_gpu"]),
            "prefill": int(r["prefill_num_flops_fwd_total"]), "decode": int(r["decode_num_flops_fwd_total"]),
            "decode_time": float(r["total_decode_latency"])}


def _run(kind: str, arg: str, python: str = PY) -> tuple[dict, float]:
    code = (f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
            f"import inference_llm_analysis as b; print(json.dumps(b._{kind}_child({arg!r})))")
    t = time.perf_counter()
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1]), time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-o", "--output", default=str(ROOT / "benchmarks" / "INFERENCE.md"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks import envs

    peer_python = envs.ensure("llm-analysis", log=lambda *x: print(*x, file=sys.stderr))
    lines = ["# symgpt vs llm-analysis 0.2.2: inference", "",
             f"B = {B}, prompt P = {P}, G = {G} new tokens, 16-bit, A100 SXM 80 GB (312 TFLOP/s, 2,039 GB/s). "
             "Written by `benchmarks/inference_llm_analysis.py`; times are per call in a fresh interpreter "
             f"(imports included), median of {args.runs}.", ""]
    for path, name in CASES:
        ours, t_ours = zip(*[_run("symgpt", path) for _ in range(args.runs)])
        peer, t_peer = zip(*[_run("peer", name, peer_python) for _ in range(args.runs)])
        ours, peer = ours[0], peer[0]
        lines += [f"## {Path(path).stem} (llm-analysis: {name})", "",
                  f"time per call: symgpt {statistics.median(t_ours):.2f} s, llm-analysis "
                  f"{statistics.median(t_peer):.2f} s", "",
                  "| quantity | symgpt | llm-analysis | llm-analysis / symgpt - 1 | why |", "|---|---:|---:|---:|---|"]
        for key, label in (("kv_cache", "KV cache, bytes (P + G tokens)"), ("weights", "weights, bytes"),
                           ("prefill", "prefill FLOPs"), ("decode", "first decode step FLOPs"),
                           ("decode_time", "decoding after the prefill, s")):
            a, b = ours[key], peer[key]
            fmt = (lambda v: f"{v:,.4g}") if key == "decode_time" else (lambda v: f"{v:,}")
            rel = b / a - 1
            expected, why = _explain(Path(path).stem, key)
            if expected is not None:
                mark = "equal" if a == b else ("exact" if a - b == expected else "NOT explained")
                why = f"{mark}: {why}"
            lines.append(f"| {label} | {fmt(a)} | {fmt(b)} | {100 * rel:+.3f} % | {why} |")
        lines.append("")
    from symgpt.core.io import write_atomic

    write_atomic(args.output, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
