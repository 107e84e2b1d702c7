"""The peers: FlopCounterMode on the meta device, calflops, fvcore, ptflops (both backends) and
llm-analysis, each run in a subprocess of its own environment (``benchmarks/envs.py``) on the
same configurations as symgpt -- GPT-2-small, GPT-3-175B and LLaMA-2-70B, B = 1, T = T_max --
timed, and each answer set beside symgpt's exact count under the tool's own convention.

The tools run ``benchmarks/peer_child.py``, which prints their raw answers; this module turns
them into numbers (:func:`parse`, :func:`answer`), asks symgpt for the same count under the
matching convention (:data:`PEERS`: a :class:`Peer`'s ``conventions`` per family), and checks
each known fault of a tool (``faults``) against the measured difference: a difference that a
named fault predicts to the unit is marked "exact".
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import envs
from .common import PY, ROOT, child, med, say, secs

CHILD = Path(__file__).resolve().parent / "peer_child.py"


def _hf(path: str) -> dict:
    cfg = json.loads((ROOT / path).read_text())
    return {k: v for k, v in cfg.items() if k not in ("architectures", "transformers_version", "torch_dtype")}


def _gpt(L: int, d: int, h: int, T: int) -> dict:
    return dict(model_type="gpt2", n_layer=L, n_embd=d, n_head=h, n_positions=T, vocab_size=50257)


def _la(L: int, d: int, h: int, T: int, V: int, ff: int, kind: str, kv=None) -> dict:
    return dict(num_layers=L, n_head=h, hidden_dim=d, vocab_size=V, max_seq_len=T, ffn_embed_dim=ff,
                model_type=kind, **({"num_key_value_heads": kv} if kv else {}))


# name -> what every tool is given. ``la``: llm-analysis's ModelConfig tried in order (a string is
# the name of a config it ships); ``symgpt``: a preset or a config.json of tests/configs.
CONFIGS = {
    "gpt2-small": dict(label="GPT-2-small", family="gpt2", symgpt="gpt2-small", B=1, T=1024,
                       hf=_gpt(12, 768, 12, 1024), la=[_la(12, 768, 12, 1024, 50257, 3072, "gpt2")]),
    "gpt3-175b": dict(label="GPT-3-175B", family="gpt2", symgpt="gpt3-175b", B=1, T=2048,
                      hf=_gpt(96, 12288, 96, 2048), la=[_la(96, 12288, 96, 2048, 50257, 49152, "gpt2")]),
    "llama-2-70b": dict(label="LLaMA-2-70B", family="llama", symgpt="tests/configs/llama-2-70b.json", B=1,
                        T=4096, hf=_hf("tests/configs/llama-2-70b.json"),
                        la=[_la(80, 8192, 64, 4096, 32000, 28672, "llama", kv=8), "upstage_Llama-2-70b-instruct-v2"]),
}


def _bias_rows(s: dict) -> int:
    """GPT-2's linear biases, one row each: 3d (c_attn) + d + 4d + d per layer."""
    return 9 * s["d"] * s["L"]


def _addmm_macs(s: dict) -> int:
    """The multiply-adds of GPT-2's four Conv1D (torch.addmm) per token: 3d² + d² + 4d² + 4d² per layer."""
    return 12 * s["B"] * s["T"] * s["L"] * s["d"] ** 2


@dataclass(frozen=True)
class Peer:
    """A tool, what it answers, and the symgpt convention its answer follows, per family.

    ``key``: the field of its raw answer compared (``flops`` or ``macs``); ``per_mac``: how many
    of its units one multiply-add is (1: it counts MACs, so ×2 gives FLOPs; 2: FLOPs);
    ``conventions``: family -> (symgpt convention overrides, words); ``faults``: family ->
    [(the difference tool - symgpt a known fault predicts, from the sizes, its reason)].
    """

    name: str
    tool: str
    env: str | None
    packages: tuple[str, ...]
    key: str
    per_mac: int
    conventions: dict[str, tuple[dict, str]]
    faults: dict[str, list[tuple[Callable[[dict], int], str]]] = field(default_factory=dict)
    param_faults: dict[str, list[tuple[Callable[[dict], int], str]]] = field(default_factory=dict)


MACS = {"flops_per_mac": 1}
PEERS = (
    Peer("FlopCounterMode (meta)", "flopcounter", None, ("torch", "transformers"), "flops", 2,
         {f: ({}, "FLOPs: 2 per multiply-add, matmuls only (full T×T attention, LM head), nothing elementwise")
          for f in ("gpt2", "llama")}),
    Peer("calflops", "calflops", "calflops", ("calflops", "torch", "transformers"), "flops", 2,
         {"gpt2": ({"norm": 5, "softmax": 1},
                   "FLOPs: 2 per multiply-add; F.layer_norm 5 per element, F.softmax 1; GPT-2's GELU (tensor ops) 0"),
          "llama": ({"softmax": 1, "activation": 1},
                    "FLOPs: 2 per multiply-add; F.softmax and F.silu 1 per element; RMSNorm (tensor ops) 0")},
         {"gpt2": [(_bias_rows, "its torch.addmm rule adds each Conv1D bias once (9·d per layer), not once per token")]}),
    Peer("fvcore", "fvcore", "fvcore", ("fvcore", "torch", "transformers"), "flops", 1,
         {"gpt2": ({**MACS, "norm": 5}, "'flops' = multiply-adds (1 each), plus layer_norm 5 per element; softmax, "
                   "GELU, adds skipped (reported as unsupported ops)"),
          "llama": (MACS, "'flops' = multiply-adds (1 each); RMSNorm, softmax, SiLU, RoPE skipped (unsupported ops)")}),
    Peer("ptflops (default backend: pytorch)", "ptflops-pytorch", "ptflops", ("ptflops", "torch", "transformers"),
         "macs", 1,
         {"gpt2": ({**MACS, "norm": 1, "softmax": 1},
                   "MACs; LayerNorm modules and F.softmax 1 per element; GPT-2's GELU (tensor ops) 0"),
          "llama": ({**MACS, "softmax": 1, "activation": 1}, "MACs; F.softmax and SiLU 1 per element; RMSNorm 0")},
         {"gpt2": [(lambda s: _addmm_macs(s) + _bias_rows(s),
                    "every Conv1D (torch.addmm) counted a second time, with its bias once (12·B·T·L·d² + 9·d·L)")]}),
    Peer("ptflops (backend aten)", "ptflops-aten", "ptflops", ("ptflops", "torch", "transformers"), "macs", 1,
         {f: (MACS, "MACs of aten.mm / bmm / addmm, an addmm's bias added 1 per element")
          for f in ("gpt2", "llama")},
         {"gpt2": [(lambda s: s["B"] * s["T"] * _bias_rows(s), "the Conv1D bias adds, 1 per element (9·B·T·d·L)")]}),
    Peer("llm-analysis", "llm-analysis", "llm-analysis", ("llm-analysis", "transformers"), "flops", 2,
         {f: ({}, "closed forms: 2 per multiply-add, matmuls and LM head (24·B·T·d² + 4·B·T²·d per layer "
              "for a 4d MLP)") for f in ("gpt2", "llama")},
         {"llama": [(lambda s: 2 * s["B"] * s["T"] * s["L"] * (2 * s["d"] * 32768 - 3 * s["d"] * s["d_ff"]),
                     "its shipped Llama-2-70B config: a 2-matrix MLP of 32,768, not SwiGLU's three of 28,672")]},
         {"gpt2": [(lambda s: -(s["T_max"] * s["d"] + 11 * s["d"] * s["L"] + s["d"]),
                    "no position table (T_max·d), no linear biases (9·d per layer), no LayerNorm biases "
                    "(2·d per layer + d)")],
          "llama": [(lambda s: -(s["V"] * s["d"] + s["L"] * s["d"] * (3 * s["d_ff"] - 2 * 32768)),
                     "the untied LM head left out (V·d); a 2-matrix MLP of 32,768 instead of three of 28,672")]}),
)


# --- turning a tool's output into numbers ------------------------------------------------------
def parse(line: str) -> dict:
    """The JSON line ``peer_child.py`` printed (the tool's raw answers, its import and run times)."""
    out = json.loads(line.strip().splitlines()[-1])
    if not isinstance(out, dict) or not {"raw", "imports", "times"} <= set(out):
        raise ValueError(f"not a peer_child line: {line[:200]!r}")
    return out


def _int(x) -> int:
    """A count a tool printed as an int, or as a float (llm-analysis computes in floats): exact
    only while it is whole and below 2**53, which is checked."""
    if isinstance(x, float):
        if not x.is_integer() or abs(x) > 2 ** 53:
            raise ValueError(f"{x!r} is not an exact integer count")
        return int(x)
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(f"{x!r} is not a count")
    return x


def answer(peer: Peer, raw: dict) -> dict:
    """The tool's params, its answer in its own unit, and that answer as FLOPs (2 per MAC)."""
    value = _int(raw[peer.key])
    return {"params": _int(raw["params"]), "value": value, "flops": value * 2 // peer.per_mac}


# --- symgpt on the same configurations ---------------------------------------------------------
SYMGPT = """
import json, time
t0 = time.perf_counter()
import sympy, networkx, numpy, symgpt, symgpt.model.model
t1 = time.perf_counter()
m = symgpt.load({path!r}, B={B}, T={T})
p, f = m.params.value, m.quantity("flops.forward").value
t2 = time.perf_counter()
convs = {convs!r}
values = [int(m.quantity("flops.forward", **c).value) for c in convs]
print(json.dumps(dict(params=int(p), flops=int(f), values=values, sizes={{k: int(v) for k, v in m.sizes.items()}},
                      imports=t1 - t0, cold=t2 - t1)))
"""


def _symgpt(cfg: dict, runs: int) -> dict:
    convs = [c for p in PEERS for c in [p.conventions[cfg["family"]][0]]]
    path = cfg["symgpt"] if not cfg["symgpt"].endswith(".json") else str(ROOT / cfg["symgpt"])
    res = [child(SYMGPT.format(path=path, B=cfg["B"], T=cfg["T"], convs=convs)) for _ in range(runs)]
    out = dict(res[0], cold=[r["cold"] for r in res], imports=[r["imports"] for r in res])
    out["by_peer"] = dict(zip([p.name for p in PEERS], out.pop("values")))
    return out


def _run_peer(peer: Peer, cfg: dict, runs: int, python) -> dict:
    """One tool on one configuration; {'error': reason} when it cannot."""
    payload = {k: cfg[k] for k in ("B", "T", "hf")} | {"name": cfg["label"], "device": "meta"}
    tries = cfg["la"] if peer.tool == "llm-analysis" else [None]
    refused = []
    for la in tries:
        if la is not None:
            payload = payload | ({"la_name": la} if isinstance(la, str) else {"la": la})
            payload.pop("la" if isinstance(la, str) else "la_name", None)
        try:
            out = subprocess.run([str(python), str(CHILD), peer.tool, json.dumps(payload), str(runs)],
                                 capture_output=True, text=True, cwd=ROOT, timeout=1800)
        except subprocess.TimeoutExpired:
            return {"error": "took over 30 minutes"}
        if out.returncode == 0:
            res = parse(out.stdout)
            if refused:
                res["note"] = f"refused the exact config ({refused[-1]}); used its shipped `{la}`"
            return res
        lines = [x for x in out.stderr.strip().splitlines() if x.strip()]
        refused.append(lines[-1].strip() if lines else f"exit {out.returncode}")
    return {"error": refused[-1]}


def measure(opts) -> dict:
    runs = opts.heavy_runs
    out = {"configs": {}, "envs": {}}
    for name, cfg in CONFIGS.items():
        say(f"peers: symgpt on {name} ...")
        out["configs"][name] = {"symgpt": _symgpt(cfg, runs)}
    for peer in PEERS:
        try:
            python = envs.ensure(peer.env, log=say) if peer.env else PY
            out["envs"][peer.name] = {"env": str(Path(python).parent.parent.relative_to(ROOT)) if peer.env
                                      else "the system interpreter",
                                      **(envs.versions(peer.env, peer.packages) if peer.env else {})}
        except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
            for name in CONFIGS:
                out["configs"][name][peer.name] = {"error": f"environment not built: {str(e).splitlines()[0]}"}
            continue
        for name, cfg in CONFIGS.items():
            say(f"peers: {peer.name} on {name} ...")
            out["configs"][name][peer.name] = _run_peer(peer, cfg, runs, python)
    return out


# --- rendering -----------------------------------------------------------------------------------
def _rel(a: int, b: int) -> str:
    """a against the exact b, as a relative error."""
    if a == b:
        return "exact"
    pct = 100 * (a - b) / b
    if abs(pct) >= 0.001:
        return f"{pct:+.3g} %"
    return f"{pct:+.8f}".rstrip("0") + " %"     # no exponent: +0.0000284 %


def _explain(diff: int, faults, sizes: dict) -> tuple[bool, str]:
    predicted = sum(f(sizes) for f, _ in faults)
    return bool(faults) and diff == predicted, "; ".join(w for _, w in faults)


def compare(peer: Peer, family: str, sym: dict, ans: dict) -> dict:
    """The tool's answer against symgpt's under the matching convention, with the faults that
    explain the difference (``explained``: True when their predictions add up to it exactly);
    the same for the parameters (``params_*``)."""
    ours = sym["by_peer"][peer.name]
    diff, pdiff = ans["value"] - ours, ans["params"] - sym["params"]
    explained, why = _explain(diff, peer.faults.get(family, []), sym["sizes"])
    p_explained, p_why = _explain(pdiff, peer.param_faults.get(family, []), sym["sizes"])
    return {"ours": ours, "diff": diff, "explained": explained, "why": why,
            "params_diff": pdiff, "params_explained": p_explained, "params_why": p_why}


def _why(what: str, diff: int, explained: bool, why: str) -> str:
    if not diff or not why:
        return ""
    return f"{what} {'exactly' if explained else 'not fully'} explained: {why}"


def section(res, ctx) -> list[str]:
    out = ["## Peers: the same counts from the tools people use", "",
           f"Each tool runs in a subprocess of its own environment, on the meta device (no memory, no "
           f"weights), B = 1 and T = T_max, eager attention. **time**: the median of {ctx['opts'].heavy_runs} "
           "runs of building the model and counting (in one process after the tool's import, so runs after "
           "the first are warm: favourable to the tool); symgpt: `load` + `params` + `flops.forward`, cold, "
           "each in a fresh interpreter. **import**: importing the tool (torch and transformers included), "
           "shown apart and not in the time. **params** and the **answer** are compared with symgpt's exact "
           "counts: the answer in the tool's own unit against symgpt under the tool's convention (listed "
           "below), then as forward FLOPs (MACs × 2) against the standard count (2 per multiply-add, "
           "matmuls only: `FlopCounterMode`'s convention, symgpt's default).", ""]
    for name, cfg in CONFIGS.items():
        c = res["configs"][name]
        sym = c["symgpt"]
        out += [f"### {cfg['label']} (B = {cfg['B']}, T = {cfg['T']:,}): {sym['params']:,} params, "
                f"{sym['flops']:,} forward FLOPs", "",
                "| tool | time | import | params | answer (its unit) | symgpt, same convention | "
                "difference | as FLOPs vs the standard count | why |",
                "|---|---:|---:|---|---:|---:|---:|---:|---|",
                f"| symgpt | {secs(med(sym['cold']))} | {secs(med(sym['imports']))} | {sym['params']:,} | "
                f"{sym['flops']:,} FLOPs | {sym['flops']:,} | exact | exact | the closed form at these sizes |"]
        for peer in PEERS:
            r = c.get(peer.name)
            if r is None:
                continue
            if "error" in r:
                out.append(f"| {peer.name} | cannot | | | | | | | {r['error']} |")
                continue
            a = answer(peer, r["raw"])
            cmp = compare(peer, cfg["family"], sym, a)
            unit = "FLOPs" if peer.per_mac == 2 else ("MACs" if peer.key == "macs" else "'flops' (MACs)")
            why = "; ".join(x for x in (
                _why("answer", cmp["diff"], cmp["explained"], cmp["why"]),
                _why("params", cmp["params_diff"], cmp["params_explained"], cmp["params_why"])) if x)
            note = f" ({r['note']})" if r.get("note") else ""
            out.append(
                f"| {peer.name} | {secs(med(r['times']))} | {secs(r['imports'])} | {a['params']:,} "
                f"({_rel(a['params'], sym['params'])}) | {a['value']:,} {unit} | {cmp['ours']:,} | "
                f"{cmp['diff']:+,} ({_rel(a['value'], cmp['ours'])}) | {_rel(a['flops'], sym['flops'])} | "
                f"{why}{note} |")
        out.append("")
    out += ["What each tool counts (the convention symgpt is asked for beside it):", ""]
    for peer in PEERS:
        env = res["envs"].get(peer.name, {})
        vers = ", ".join(f"{k} {v}" for k, v in env.items() if k != "env")
        kinds = {(json.dumps(o, sort_keys=True), w) for o, w in peer.conventions.values()}
        convs = "; ".join((f"{fam}: " if len(kinds) > 1 else "") + f"{words} (symgpt: {_conv_text(over)})"
                          for fam, (over, words) in peer.conventions.items()
                          if len(kinds) > 1 or fam == next(iter(peer.conventions)))
        out.append(f"- **{peer.name}** ({env.get('env', 'not built')}{'; ' + vers if vers else ''}): {convs}.")
    out += ["", "Parameters: every torch tool counts the built module's parameters (tied weights once), so "
            "they equal symgpt's; llm-analysis counts from its closed form: one embedding table (no untied "
            "head, no position table), no biases.", ""]
    return out


def _conv_text(over: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in over.items()) or "the default convention"
