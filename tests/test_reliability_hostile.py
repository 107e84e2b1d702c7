"""Hostile inputs, each run as a real ``symgpt`` process in a sandbox (its own cwd,
HOME and TMPDIR under one temporary folder). Every case checks the exit code, exactly one
``symgpt: error:`` line on stderr when it fails, its time and peak memory (``os.wait4``), and
that nothing under the sandbox changed but the case's own target.

Classes: special files, blow-ups, huge numbers, control characters, reports around the user's
files, resource limits, stdout full or closed, an expression starting with '-'.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import xml.dom.minidom
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from harness import check_measured, run_measured, sandbox, snapshot, touched

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "tests" / "configs" / "llama-2-7b.json"
EVIL = "evil\x1b[31m\x01name"  # an escape sequence and a control character in a model's name


def gpt2_params(L, d, V=50257, T_max=1024):
    """Lecture note 7.3's closed form of a tied GPT-2 (Radford et al. 2019 architecture)."""
    return 12 * L * d * d + 13 * L * d + V * d + T_max * d + 2 * d


@dataclass
class Case:
    name: str
    argv: list                   # may hold "{work}" (the sandbox's cwd)
    code: int
    message: str = ""            # a part of the error line (or of stderr on exit 0)
    seconds: float = 20          # time bound (a cold start of Python, SymPy and NumPy included)
    peak_mb: float = 400         # peak resident memory bound
    setup: Callable | None = None        # setup(work) before the run
    targets: tuple = ()          # paths under work/ the case may create or change
    out_has: tuple = ()          # strings its stdout must contain
    out_lacks: tuple = ()        # strings its stdout must not contain
    after: Callable | None = None        # after(work, result): more checks
    extra: dict = field(default_factory=dict)


def _fifo(work):
    os.mkfifo(work / "fifo")


def _null_copy(work):
    """A character device like /dev/null in the sandbox (as root); else a link to /dev/null."""
    if os.geteuid() == 0:
        os.mknod(work / "null", 0o666 | stat.S_IFCHR, os.stat("/dev/null").st_rdev)
    else:
        (work / "null").symlink_to("/dev/null")


def _still_null(work, r):
    st = os.stat(work / "null")
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.stat("/dev/null").st_rdev


def _link(work):
    (work / "sub").mkdir()
    (work / "sub" / "real.tex").write_text("old\n")
    (work / "link.tex").symlink_to(Path("sub") / "real.tex")


def _link_kept(work, r):
    assert (work / "link.tex").is_symlink()
    assert (work / "sub" / "real.tex").read_text().startswith("% symgpt")


def _config_with(work, name="c.json", **fields):
    cfg = json.loads(CONFIG.read_text())
    cfg.update(fields)
    (work / name).write_text(json.dumps(cfg))


def _raw_config(text, name="c.json"):
    return lambda work: (work / name).write_text(text)


def _evil(work):
    (work / f"{EVIL}.json").write_text(CONFIG.read_text())


def _no_raw_controls(work, r):
    assert b"\x1b" not in r.out and b"\x01" not in r.out
    assert b"\\x1b" in r.out  # shown as an escape


def _svg_is_xml(work, r):
    data = (work / "g.svg").read_bytes()
    assert b"\x1b" not in data and b"\x01" not in data
    xml.dom.minidom.parseString(data)  # well-formed


def _report_with_notes(work):
    from symgpt.documents.report import write_report
    import symgpt

    write_report(symgpt.load("gpt2-small"), work / "r", pdf=False)
    (work / "r" / "my-notes.txt").write_text("mine\n")
    (work / "r" / "mine").mkdir()
    (work / "r" / "mine" / "a.txt").write_text("also mine\n")


def _notes_kept(work, r):
    assert (work / "r" / "my-notes.txt").read_text() == "mine\n"
    assert (work / "r" / "mine" / "a.txt").read_text() == "also mine\n"
    assert (work / "r" / "index.md").read_text().startswith("# symgpt report:")


def _thesis(work):
    (work / "t").mkdir()
    (work / "t" / "index.md").write_text("# symgpt report: looks like one\n")
    (work / "t" / "thesis.tex").write_text("years of work\n")


def _collision(work):
    _report_with_notes(work)
    manifest = work / "r" / ".symgpt-files"
    manifest.write_text(manifest.read_text().replace("\nparams.md\n", "\n"))  # the user's now


def _latex_total(out: str) -> list:
    return ["latex", "gpt2-small", "--what", "total", "-o", out]


L1000 = 10**1000
CASES = [
    # --- special files ------------------------------------------------------------------------
    # never the real /dev/null or /dev/stdout: a symgpt without the fix, run as root, would
    # replace them (for every process on the machine); a copy in the sandbox shows the same
    Case("-o a character device (a copy of /dev/null) discards", _latex_total("null"), 0,
         setup=_null_copy, after=_still_null),
    Case("-o /dev/stdout prints", _latex_total("stdout"), 0, out_has=("\\begin{align*}",),
         out_lacks=("wrote",), setup=lambda w: (w / "stdout").symlink_to("/proc/self/fd/1"),
         after=lambda w, r: (w / "stdout").is_symlink() or pytest.fail("the link was replaced")),
    Case("-o - prints", _latex_total("-"), 0, out_has=("\\begin{align*}",), out_lacks=("wrote",)),
    Case("-o through a symlink replaces its target", _latex_total("link.tex"), 0, setup=_link,
         targets=("sub/real.tex",), after=_link_kept),
    Case("-o a FIFO nobody reads is refused at once", _latex_total("fifo"), 2,
         "no process is reading it", setup=_fifo),
    Case("a FIFO as a config is refused unread", ["params", "./fifo"], 2,
         "is not a regular file (a FIFO)", setup=_fifo),
    Case("a FIFO as a notation file", ["latex", "gpt2-small", "--notation", "fifo"], 2,
         "is not a regular file (a FIFO)", setup=_fifo),
    Case("/dev/zero as a notation file", ["latex", "gpt2-small", "--notation", "/dev/zero"], 2,
         "is not a regular file (a device)"),
    Case("/dev/urandom as a config", ["params", "/dev/urandom"], 2, "is not a regular file (a device)"),
    # --- blow-ups: refused before anything is expanded ----------------------------------------
    Case("a power of a power of a sum", ["compare", "gpt2-small", "params", "((d+L+V+1)^64)^64"], 2,
         "more than 2,000 terms (the limit)", seconds=15),
    Case("a power of a long sum", ["compare", "gpt2-small", "params", "(B+T+d+L+V+h+d_ff+1)^64"], 2,
         "more than 2,000 terms (the limit)", seconds=15),
    Case("a --let that would blow up", ["rule", "gpt2-small", "params", "--as", "d", "--let",
                                        "N=(d+L+V+T+B+h+1)^64"], 2, "(the limit)", seconds=15),
    Case("a degree past the limit", ["compare", "gpt2-small", "params", "(d^60)^5"], 2,
         "its degree would be 300, more than the limit of 256"),
    Case("a --where that would blow up", ["sweep", "gpt2-small", "--grid", "L=1:2:1", "--where",
                                          "params < (d+L+V+T+B+h+1)^64"], 2, "(the limit)"),
    # --- huge numbers --------------------------------------------------------------------------
    Case("a 5,000-digit n_layer", ["params", "c.json"], 2, "an integer of 5,000 digits (at most 1001)",
         setup=_raw_config('{"model_type": "gpt2", "n_layer": ' + "7" * 5000 + "}")),
    Case("NaN in a config", ["params", "c.json"], 2, "NaN is not a number JSON allows",
         setup=lambda w: (w / "c.json").write_text(CONFIG.read_text().replace("32,", "NaN,", 1))),
    Case("1e400 as a float in a config", ["params", "c.json"], 2, "too large for a float",
         setup=lambda w: _config_with(w, rms_norm_eps=0.5) or (w / "c.json").write_text(
             (w / "c.json").read_text().replace("0.5", "1e400"))),
    Case("--set L=1e1000 answers exactly", ["params", "gpt2-small", "--set", "L=1e1000"], 0,
         out_has=(f"{gpt2_params(L1000, 768):,}",)),
    Case("(1e1000)^64 in an expression", ["compare", "gpt2-small", "params", "(1e1000)^64"], 2,
         "over 16,384 bits, the limit"),
    Case("(1e1000)^64 in --where", ["sweep", "gpt2-small", "--grid", "L=1:2:1", "--where",
                                    "params < (1e1000)^64"], 2, "over 16,384 bits, the limit"),
    # 6·N·D/peak with N ~ 1.24e8, D = 1e400, peak 3e14 is ~2.5e394 s (attention adds 15 %)
    Case("--tokens 1e400", ["time", "gpt2-small", "--set", "B=8", "--set", "T=1024", "--tokens",
                            "1e400"], 0, out_has=("× 10³⁹⁴ s",)),
    Case("--option peak=1e1000", ["rule", "gpt2-small", "time.step", "--as", "d", "--set", "B=8",
                                  "--set", "T=1024", "--option", "peak=1e1000"], 0),
    Case("a file name past the system's limit", _latex_total("x" * 300 + ".tex"), 2,
         "File name too long"),
    Case("a config name past the system's limit", ["params", "x" * 300 + ".json"], 2,
         "File name too long (a name in it has 305 bytes; the file system allows 255)"),
    Case("a report folder under a name past the limit", ["report", "gpt2-small", "--no-pdf", "-o",
                                                          "y" * 300 + "/rep"], 2,
         "File name too long (a name in it has 300 bytes; the file system allows 255)"),
    Case("a sweep's CSV through a symlink loop", ["sweep", "gpt2-small", "--grid", "L=1:2:1", "-o",
                                                  "loop/x.csv"], 2,
         "Too many levels of symbolic links (a symlink loop)",
         setup=lambda w: (w / "loop").symlink_to("loop")),
    Case("a non-UTF-8 config name and report folder", ["report", os.fsdecode(b"bad\xff.json"),
                                                       "--no-pdf", "-o", os.fsdecode(b"rep\xff")],
         0, seconds=40, targets=(os.fsdecode(b"rep\xff"),),
         setup=lambda w: (w / os.fsdecode(b"bad\xff.json")).write_text(CONFIG.read_text()),
         after=lambda w, r: b"\\udcff" in (w / os.fsdecode(b"rep\xff") / "params.md").read_bytes()
         or pytest.fail("the undecodable byte is not shown as its escape")),
    # --- control characters in names ---------------------------------------------------------
    Case("an escape sequence in a name, on the terminal", ["params", f"{EVIL}.json"], 0,
         setup=_evil, after=_no_raw_controls),
    Case("... in DOT", ["graph", f"{EVIL}.json"], 0, setup=_evil, after=_no_raw_controls),
    Case("... in SVG", ["graph", f"{EVIL}.json", "-o", "g.svg"], 0, setup=_evil,
         targets=("g.svg",), after=_svg_is_xml),
    Case("... in LaTeX", ["latex", f"{EVIL}.json", "--standalone", "-o", "e.tex"], 0, setup=_evil,
         targets=("e.tex",),
         after=lambda w, r: b"\x1b" not in (w / "e.tex").read_bytes() or pytest.fail("raw ESC")),
    # --- notation values: refused where they would not compile, accepted where they do ------
    *[Case(f"notation {v}", ["latex", "gpt2-small", "--what", "total", "--notation", "n.txt"], 2,
           "cannot appear inside a text-mode argument",
           setup=lambda w, v=v: (w / "n.txt").write_text(f"L = {v}\n"))
      for v in (r"\text{a_b}", r"\text{a^b}", r"\text{\alpha}")],
    Case("notation file with a BOM, \\! and \\;", ["latex", "gpt2-small", "--what", "total",
                                                  "--notation", "n.txt"], 0, out_has=("N\\!M",),
         setup=lambda w: (w / "n.txt").write_bytes("\ufeffL = N\\!M\nd = a\\;b\n".encode())),
    # --- reports around the user's files ------------------------------------------------------
    Case("a rerun keeps the user's files", ["report", "gpt2-small", "--no-pdf", "-o", "r"], 0,
         "kept 2 file(s) in r that the report did not write: mine/a.txt, my-notes.txt",
         seconds=40, setup=_report_with_notes, targets=("r",), after=_notes_kept),
    Case("a look-alike folder is refused whole", ["report", "gpt2-small", "--no-pdf", "-o", "t"], 2,
         "it holds thesis.tex, which symgpt does not write", seconds=40, setup=_thesis),
    Case("a user's file where the report writes one", ["report", "gpt2-small", "--no-pdf", "-o",
                                                       "r"], 2, "params.md would be replaced",
         seconds=40, setup=_collision),
    # --- TeX: a PDF build writes no font cache into HOME, leaves no temp folder ------------------
    Case("a report with its PDF touches only its folder", ["report", "gpt2-small", "-o", "r"], 0,
         seconds=120, targets=("r",),
         after=lambda w, r: (w / "r" / "latex" / "report.pdf").read_bytes().startswith(b"%PDF")
         or pytest.fail("no PDF")),
    # --- resources ------------------------------------------------------------------------------
    Case("unrolled Mixtral is refused at once", ["graph", "mixtral-8x7b", "--unroll", "-o", "m.svg"],
         2, "too wide for Graphviz to lay out in seconds", seconds=15),
    # the CSV of a million rows is streamed: kept whole it took ~0.5 GB (2.4 GB at 5 million)
    Case("a million-row sweep streams", ["sweep", "gpt2-small", "--grid", "L=1:1000000:1", "-o",
                                         "big.csv"], 0, "1,000,000 rows written", seconds=40,
         peak_mb=300, targets=("big.csv",),
         after=lambda w, r: _csv_tail(w / "big.csv", gpt2_params(1_000_000, 768))),
    # --- the options parser --------------------------------------------------------------------
    Case("an expression starting with '-'", ["compare", "gpt2-small", "params", "-2*d"], 0,
         out_has=(f"= {-gpt2_params(12, 768) - 2 * 768:,}",)),
]


def _csv_tail(path: Path, last_params: int) -> None:
    with open(path, "rb") as f:
        assert f.readline() == b"L,params\n"
        f.seek(-200, os.SEEK_END)
        assert f.read().splitlines()[-1] == f"1000000,{last_params}".encode()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile(case: Case, tmp_path):
    dirs = sandbox(tmp_path)
    work = dirs["work"]
    if case.setup:
        case.setup(work)
    before = snapshot(tmp_path)
    argv = [a.replace("{work}", str(work)) for a in case.argv]
    r = run_measured(argv, dirs, seconds=case.seconds + 30)
    check_measured(r, case.code, case.message, case.seconds, case.peak_mb)
    out = r.out.decode("utf-8", "replace")
    for s in case.out_has:
        assert s in out, f"{case.name}: {s!r} not in stdout {out[:500]!r}"
    for s in case.out_lacks:
        assert s not in out, f"{case.name}: {s!r} in stdout"
    if case.after:
        case.after(work, r)
    allowed = {f"work/{t}" for t in case.targets}
    changed = {p for p in touched(before, snapshot(tmp_path))
               if not any(p == a or p.startswith(a + "/") for a in allowed)}
    assert not changed, f"{case.name}: touched {sorted(changed)[:10]}"


def test_fifo_receives_the_bytes(tmp_path):
    """-o FIFO writes into the FIFO (a reader gets the document); the FIFO stays a FIFO."""
    dirs = sandbox(tmp_path)
    fifo = dirs["work"] / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    import time

    time.sleep(0.2)  # the reader has the FIFO open before symgpt writes
    r = run_measured(_latex_total("fifo"), dirs)
    reader.join(30)
    check_measured(r, 0)
    assert got and got[0].startswith(b"% symgpt: total parameter count of gpt2-small")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("how", ["full", "closed"])
def test_stdout_full_or_closed(tmp_path, how):
    """`> /dev/full` and `>&-`: one line, exit 2, no Python message at exit."""
    dirs = sandbox(tmp_path)
    if how == "full":
        fd = os.open("/dev/full", os.O_WRONLY)
        try:
            r = run_measured(["params", "gpt2-small"], dirs, stdout=fd)
        finally:
            os.close(fd)
        check_measured(r, 2, "cannot write to standard output: No space left on device")
    else:
        import subprocess
        import sys

        from harness import sandbox_env

        p = subprocess.run([sys.executable, "-m", "symgpt", "params", "gpt2-small"],
                           cwd=dirs["work"], env=sandbox_env(dirs), stdout=None,
                           stderr=subprocess.PIPE, pass_fds=(), close_fds=True,
                           preexec_fn=lambda: os.close(1), timeout=60)
        assert p.returncode == 2, p.stderr
        lines = p.stderr.decode().splitlines()
        assert lines == ["symgpt: error: cannot write to standard output: it is closed"], lines


# values the notation check accepts, the awkward ones: each must compile where symgpt puts it
# (next to other symbols, squared, in subscripts); thirteen symbols per document
ACCEPTED = [
    {"B": r"\text{a}_{b}", "T": r"a\!b", "T_max": r"a\;b", "d": r"\text{a\,b}",
     "h": r"\mathrm{a_b}", "h_kv": r"\hat{\text{x}}", "d_head": r"\text{x}_{\text{y}}",
     "L": r"\alpha'", "V": r"\mathcal{V}", "d_ff": r"d_{\mathrm{ff}}^{(1)}", "E": r"\text{a{b}c}",
     "k": r"\#k", "W": r"\text{n-1 <x> [y]: z=|w|; !}"},
    {"B": r"x^\alpha", "T": "a''", "T_max": r"\textit{\textsf{x}}", "d": "a'",
     "h": r"\bar{\mathbf{h}}", "h_kv": "|a|", "d_head": "a_{b'}", "L": r"\text{\#}",
     "V": "x_{1,2}^{3}", "d_ff": r"\operatorname{ff}", "E": "-a+b", "k": r"\max_k",
     "W": r"\star\dagger\ast\cdot\times\infty\prime"},
]


@pytest.mark.parametrize("values", ACCEPTED, ids=["text-and-spacing", "scripts-and-symbols"])
def test_accepted_notation_values_compile(values, tmp_path):
    from helpers import compile_tex

    from attacks import run_cli

    (tmp_path / "n.txt").write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    tex = tmp_path / "doc.tex"
    r = run_cli(["latex", "gpt2-small", "--notation", str(tmp_path / "n.txt"), "--standalone",
                 "-o", str(tex)])
    assert r.code == 0, r.err
    code, log, _ = compile_tex(tex)
    assert code == 0, [line for line in log.splitlines() if line.startswith("!")][:3]
