"""Byte-identical outputs across runs and across PYTHONHASHSEED values (set
iteration order, dict-of-set orders and SymPy's hashing must never leak into an output).
Each seed runs every command below and writes a report in its own process; the PDF aside,
every byte must agree."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = [
    ["params", "gpt2-small", "--json"],
    ["params", "gpt2", "--set", "tied=false"],
    ["shapes", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json"],
    ["models", "--json"],
    ["flops", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json"],
    ["memory", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json"],
    ["time", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--json"],
    ["rule", "gpt2-small", "params", "--as", "d", "--json"],
    ["dominance", "gpt2-small", "flops.forward", "--as", "T", "--json"],
    ["crossover", "gpt2-small", "flops.forward", "--as", "T", "--json"],
    ["compare", "gpt2-small", "params", "12*L*d^2 + 13*L*d", "--json"],
    ["check", "--json"],
    ["latex", "gpt2-small", "--what", "params", "--what", "shapes", "--notation", "raschka"],
    ["table", "gpt2-small", "gpt2-medium", "--format", "latex"],
    ["table", "gpt2-small", "gpt2-medium", "--format", "markdown"],
    ["table", "gpt2-small", "gpt2-medium", "--format", "csv", "--columns", "L,d,params,flops.forward"],
    ["graph", "gpt2-small"],
    ["sweep", "gpt2-small", "--grid", "L=1:3:1", "--grid", "tied=true,false", "--columns", "params"],
    ["params", str(ROOT / "tests" / "configs" / "llama-2-7b.json"), "--json"],
]

SCRIPT = """
import contextlib, io, json, sys
from symgpt.cli import main
out = {}
for argv in json.loads(sys.argv[1]):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    out[" ".join(argv)] = [code, buf.getvalue()]
with contextlib.redirect_stdout(io.StringIO()):
    main(["report", "gpt2-small", "-o", sys.argv[2], "--no-pdf"])
print(json.dumps(out))
"""


def run_seed(seed: str, folder: Path) -> tuple[dict, dict]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(COMMANDS), str(folder / "report")],
                       env=env, capture_output=True, text=True, cwd=folder, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    outputs = json.loads(r.stdout)
    report = {str(p.relative_to(folder / "report")): p.read_bytes()
              for p in sorted((folder / "report").rglob("*")) if p.is_file() and p.suffix != ".pdf"}
    return outputs, report


def test_outputs_are_byte_identical_across_hash_seeds(tmp_path):
    runs = {}
    for seed in ("0", "1", "12345"):
        (tmp_path / seed).mkdir()
        runs[seed] = run_seed(seed, tmp_path / seed)
    outputs, report = runs["0"]
    for argv, (code, text) in outputs.items():
        assert code == 0, f"symgpt {argv}: exit {code}"
        assert text.strip(), f"symgpt {argv}: no output"
    assert len(report) >= 5 and "params.json" in report and "index.md" in report
    for seed in ("1", "12345"):
        other_outputs, other_report = runs[seed]
        for argv in outputs:
            assert other_outputs[argv] == outputs[argv], f"symgpt {argv} differs with PYTHONHASHSEED={seed}"
        assert sorted(other_report) == sorted(report), f"report files differ with PYTHONHASHSEED={seed}"
        for name in report:
            assert other_report[name] == report[name], f"report/{name} differs with PYTHONHASHSEED={seed}"


def test_same_process_runs_are_identical(tmp_path):
    """Caches (the graph builder's, the providers') must not change a second run's output."""
    import contextlib
    import io

    from symgpt.cli import main

    def once(argv):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(argv) == 0
        return buf.getvalue()

    for argv in COMMANDS[:8] + COMMANDS[12:17]:
        assert once(argv) == once(argv), argv
