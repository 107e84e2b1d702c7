"""``graph --unroll`` vs the rolled graph of GPT-2-small at L = 64: the CLI end to end, and the
DOT text alone in-process with the derivations cached."""

from __future__ import annotations

from .common import PY, child, med, met, ratio, say, secs, wall


UNROLL = """
import json, time
import symgpt, symgpt.model.model
from symgpt.documents.diagrams import dot_text
m = symgpt.load("gpt2-small", L=64)
dot_text(m)                                         # derivations cached: both draw from them
rolled, unrolled = [], []
for _ in range({runs}):
    s = time.perf_counter(); a = dot_text(symgpt.load("gpt2-small", L=64)); rolled.append(time.perf_counter() - s)
    s = time.perf_counter(); b = dot_text(symgpt.load("gpt2-small", L=64), unroll=True)
    unrolled.append(time.perf_counter() - s)
print(json.dumps(dict(rolled=rolled, unrolled=unrolled, nodes=b.count("label=<"))))
"""


def measure(opts) -> dict:
    say("graph --unroll ...")
    unroll = child(UNROLL.format(runs=opts.runs))
    graph = [PY, "-m", "symgpt", "graph", "gpt2-small", "--set", "L=64", "--format", "dot", "-o", "-"]
    unroll["cli_rolled"] = wall(graph, opts.runs)
    unroll["cli_unrolled"] = wall([*graph, "--unroll"], opts.runs)
    return unroll


def rows(res, ctx) -> list[tuple]:
    rolled, unrolled = med(res["rolled"]), med(res["unrolled"])
    cli_ro, cli_un = med(res["cli_rolled"]), med(res["cli_unrolled"])
    return [
        ("`symgpt graph gpt2-small --set L=64 --unroll --format dot`", secs(cli_un),
         f"{secs(cli_ro)} (rolled)", ratio(cli_un, cli_ro), "≤ 1.3×", met(cli_un <= 1.3 * cli_ro)),
        ("the same, drawing only (in-process, derivations cached)", secs(unrolled), f"{secs(rolled)} (rolled)",
         ratio(unrolled, rolled), "", ""),
    ]


def details(res, ctx) -> list[str]:
    return [f"- `graph --unroll`: `dot_text` of GPT-2-small with L = 64, rolled {secs(med(res['rolled']))}, "
            f"unrolled {secs(med(res['unrolled']))} ({res['nodes']} labelled boxes), derivations cached for "
            "both: the unrolled text is 64 copies of the block, so drawing it is more string work, not more "
            "derivation."]


# --- Graphviz's layout time against the estimate that ``graph --unroll`` refuses by ---------------
# ``python3 -m benchmarks.unroll`` times ``dot -Tsvg`` (60 s timeout, as symgpt's) on each case's
# DOT text and prints the rows of benchmarks/UNROLL.md: the estimate's parts and the seconds.

LAYOUT_CASES = (
    ("gpt2-xl",), ("gpt2-small", "--set", "L=64"), ("mixtral-8x7b", "--set", "L=4"),
    ("mixtral-8x7b", "--set", "L=8"), ("mixtral-8x7b", "--set", "L=10"),
    ("mixtral-8x7b", "--set", "L=12"), ("deepseek-v3", "--set", "L=4"),
    ("deepseek-v3", "--set", "L=8"), ("llama-3-8b",),
)


def layout_rows(timeout: float = 60) -> list[str]:
    import subprocess
    import time

    from symgpt.external.graphviz import layout_cost

    out = ["| case | boxes | edge passes | ranks | widest | estimate | `dot -Tsvg` |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for case in LAYOUT_CASES:
        dot = subprocess.run([PY, "-m", "symgpt", "graph", *case, "--unroll", "--format", "dot"],
                             capture_output=True, text=True, check=True).stdout
        c = layout_cost(dot)
        start = time.perf_counter()
        try:
            subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=timeout,
                           check=True)
            took = f"{time.perf_counter() - start:.1f} s"
        except subprocess.TimeoutExpired:
            took = f"> {timeout:.0f} s (timeout)"
        out.append(f"| `{' '.join(case)}` | {c.nodes:,} | {c.virtual:,} | {c.ranks:,} | {c.widest} | "
                   f"{c.units:,} | {took} |")
        say(out[-1])
    return out


if __name__ == "__main__":
    print("\n".join(layout_rows()))
