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
