"""A report part marked ``PARALLEL`` runs in a forked process (symgpt.external.forked): its files
land in the report, its errors surface in the parent as they would have in-process, and a
failure elsewhere stops it. The oracles: process ids, the files' bytes, the errors' messages, and
the page a report writes against the page made in this process."""

import os
import signal
import time
import types

import pytest

import symgpt
import symgpt.documents.report
from symgpt.documents import html as html_part
from symgpt.documents.report import write_report
from symgpt.documents.reportparts import core as core_part
from symgpt.core.errors import SymgptError

def part(write):
    return types.SimpleNamespace(__name__="tests.fake", PARALLEL=True, write=write)


def use(monkeypatch, *parts):
    monkeypatch.setattr(symgpt.documents.report, "REPORT_PARTS", (core_part, *parts))


def test_a_parallel_part_writes_from_another_process(tmp_path, monkeypatch):
    def write(model, folder, **options):
        (folder / "pid.txt").write_text(f"{os.getpid()} {model.name} {sorted(options)}")
        return ["pid.txt"]

    use(monkeypatch, part(write))
    files = write_report(symgpt.load("gpt2-small"), tmp_path / "r", pdf=False)
    pid, name, options = (tmp_path / "r" / "pid.txt").read_text().split(" ", 2)
    assert int(pid) != os.getpid() and name == "gpt2-small" and options == "['pdf']"
    assert tmp_path / "r" / "pid.txt" in files and tmp_path / "r" / "params.json" in files
    assert "pid.txt" in (tmp_path / "r" / "index.md").read_text()


@pytest.mark.parametrize("error, raised, message", [
    (SymgptError("d=5 is not divisible by h=2"), SymgptError, "d=5 is not divisible by h=2"),
    (MemoryError("too big"), MemoryError, "too big"),
    (ValueError("a bug"), RuntimeError, "the fake part of the report failed: a bug"),
])
def test_a_parallel_parts_error_is_raised_in_the_parent_and_keeps_the_previous_report(
        tmp_path, monkeypatch, error, raised, message):
    out = tmp_path / "r"
    use(monkeypatch)
    write_report(symgpt.load("gpt2-small"), out, pdf=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def write(model, folder, **options):
        (folder / "half.txt").write_text("half")
        raise error

    use(monkeypatch, part(write))
    with pytest.raises(raised, match=message) as e:
        write_report(symgpt.load("gpt2-small"), out, pdf=False)
    if raised is RuntimeError:
        assert "ValueError" in str(e.value)  # the child's traceback comes along
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_killed_child_is_an_error(tmp_path, monkeypatch):
    def write(model, folder, **options):
        os.kill(os.getpid(), signal.SIGKILL)

    use(monkeypatch, part(write))
    with pytest.raises(RuntimeError, match="stopped without an answer"):
        write_report(symgpt.load("gpt2-small"), tmp_path / "r", pdf=False)
    assert not (tmp_path / "r").exists()


def test_a_failure_elsewhere_stops_the_child(tmp_path, monkeypatch):
    pidfile = tmp_path / "child.pid"

    def slow(model, folder, **options):
        pidfile.write_text(str(os.getpid()))
        time.sleep(60)
        return []

    def failing(model, folder, **options):
        for _ in range(200):  # until the child has started
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.05)
        raise SymgptError("a later part failed")

    sequential = types.SimpleNamespace(__name__="tests.failing", write=failing)
    monkeypatch.setattr(symgpt.documents.report, "REPORT_PARTS", (part(slow), sequential))
    began = time.monotonic()
    with pytest.raises(SymgptError, match="a later part failed"):
        write_report(symgpt.load("gpt2-small"), tmp_path / "r", pdf=False)
    assert time.monotonic() - began < 30
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(int(pidfile.read_text()), 0)


def test_the_reports_page_is_the_page_made_in_this_process(tmp_path):
    assert html_part.PARALLEL and html_part in symgpt.documents.report.REPORT_PARTS
    m = symgpt.load("gpt2-small")
    write_report(m, tmp_path / "r", pdf=False)
    assert (tmp_path / "r" / html_part.FILE).read_text(encoding="utf-8") == html_part.html(m)


def test_without_fork_the_part_runs_here(tmp_path, monkeypatch):
    def write(model, folder, **options):
        (folder / "pid.txt").write_text(str(os.getpid()))
        return ["pid.txt"]

    use(monkeypatch, part(write))
    monkeypatch.delattr(os, "fork")
    write_report(symgpt.load("gpt2-small"), tmp_path / "r", pdf=False)
    assert (tmp_path / "r" / "pid.txt").read_text() == str(os.getpid())
