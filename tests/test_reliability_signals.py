"""What a stopped or repeated run leaves behind, and answers where internal errors were.

* SIGTERM while TeX builds a report's PDF: exit 143 with one line, latexmk and pdflatex killed
  with it, no staging folder and no TeX temp folder left, nothing written into HOME.
* SIGKILL: latexmk dies with its parent (PR_SET_PDEATHSIG), not seconds later.
* A graph's PDF is the same bytes in every time zone.
* ``time.mfu`` / ``time.training`` without ``measured`` / ``tokens``: one line naming the
  option, for every preset and every command that takes a quantity.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from attacks import check_cli, run_cli
from harness import run_measured, sandbox, sandbox_env, snapshot, symgpt_pid, touched


def _ours(root: Path) -> list[tuple[int, str]]:
    """(pid, command) of every process whose working folder lies under *root*."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if cwd.startswith(str(root)):
            found.append((int(pid), comm))
    return found


def _wait_for_tex(root: Path, proc, limit: float = 120) -> bool:
    """Wait until a TeX process runs under *root* (True), or *proc* ends or time runs out."""
    end = time.monotonic() + limit
    while time.monotonic() < end and proc.poll() is None:
        if any(comm in ("latexmk", "pdflatex", "perl") for _, comm in _ours(root)):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_stopped_pdf_build_leaves_nothing_running(tmp_path, sig):
    dirs = sandbox(tmp_path)
    before = snapshot(tmp_path)
    state = {}

    def stop_during_tex(proc):
        pid = symgpt_pid(proc)
        state["tex"] = _wait_for_tex(tmp_path, proc)
        os.kill(pid, sig)  # symgpt only, not its process group
        state["stopped"] = time.monotonic()

    r = run_measured(["report", "gpt2-small", "-o", "r"], dirs, seconds=180, on_start=stop_during_tex)
    assert state["tex"], f"TeX never started: {r.err[-500:]}"
    time.sleep(0.5)
    left = [(pid, comm) for pid, comm in _ours(tmp_path) if comm != "pdflatex"]
    # pdflatex, a grandchild, may finish the page it is on after latexmk is gone
    assert not left, f"still running half a second after {sig.name}: {left}"
    if sig == signal.SIGTERM:
        assert r.code == 143, r.err
        assert r.err.splitlines() == ["symgpt: error: terminated (SIGTERM)"], r.err
        end = time.monotonic() + 5
        while _ours(tmp_path) and time.monotonic() < end:
            time.sleep(0.1)
        assert not _ours(tmp_path)
        assert not touched(before, snapshot(tmp_path)), "a staging or TeX folder, or a cache in HOME"
    else:
        assert r.code == -signal.SIGKILL
        assert not (dirs["work"] / "r").exists()
        home = [p for p in touched(before, snapshot(tmp_path)) if p.startswith("home")]
        assert not home, f"written into HOME: {home}"
        # the next build removes the TeX folder the killed one could not
        assert [p.name for p in dirs["tmp"].iterdir() if p.name.startswith("symgpt-tex-")]
        again = run_measured(["graph", "gpt2-small", "-o", "g.svg"], dirs)  # no TeX: stays
        assert again.code == 0 and any(p.name.startswith("symgpt-tex-") for p in dirs["tmp"].iterdir())
        from symgpt.external.pdflatex import build_pdf

        os.environ["TMPDIR"], previous = str(dirs["tmp"]), os.environ.get("TMPDIR")
        import tempfile

        tempfile.tempdir = None
        try:
            build_pdf("\\documentclass{article}\\begin{document}x\\end{document}", "x")
        finally:
            os.environ.pop("TMPDIR") if previous is None else os.environ.update(TMPDIR=previous)
            tempfile.tempdir = None
        assert not [p.name for p in dirs["tmp"].iterdir() if p.name.startswith("symgpt-tex-")]


def test_graph_pdf_is_the_same_in_every_time_zone(tmp_path):
    pdfs = []
    for zone in ("UTC", "Asia/Kolkata", "America/St_Johns"):
        dirs = sandbox(tmp_path / zone.replace("/", "_"))
        r = run_measured(["graph", "gpt2-small", "-o", "g.pdf"], dirs,
                         env=sandbox_env(dirs, TZ=zone))
        assert r.code == 0, r.err
        pdfs.append((dirs["work"] / "g.pdf").read_bytes())
    assert pdfs[0].startswith(b"%PDF") and pdfs[0] == pdfs[1] == pdfs[2]


COMMANDS = {
    "dominance": lambda m, q: ["dominance", m, q],
    "table": lambda m, q: ["table", m, "--columns", q],
    "sweep": lambda m, q: ["sweep", m, "--grid", "B=1:2:1", "--columns", q],
    "rule": lambda m, q: ["rule", m, q, "--as", "d"],
    "compare": lambda m, q: ["compare", m, q, "1"],
    "crossover": lambda m, q: ["crossover", m, q, "--as", "T"],
}


@pytest.mark.parametrize("quantity,option", [("time.mfu", "measured"), ("time.training", "tokens")])
def test_time_quantities_name_their_missing_option(quantity, option):
    from symgpt.families import presets

    PRESETS = presets()

    for model in PRESETS:
        lengths = []  # the sequence length(s) a table needs first where the preset binds no T_max
        if "T_max" not in PRESETS[model].sizes:
            lengths = (["--set", "T_enc=8", "--set", "T_dec=8"] if PRESETS[model].family in ("t5", "bart", "transformer")
                       else ["--set", "T=8"])
        for name, argv in COMMANDS.items():
            r = run_cli(argv(model, quantity) + lengths)
            check_cli(r, allow=(2,))
            assert f"quantity {quantity} needs the option {option}" in r.err, (model, name, r.err)
