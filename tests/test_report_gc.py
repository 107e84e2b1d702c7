"""While ``symgpt report`` writes, the cycle collector is frozen over the imports and runs rarely;
the process's settings are put back afterwards, even when the report fails (an in-process caller,
such as a notebook or this test run, keeps its own)."""

import gc

import symgpt.documents.report as report
from symgpt.cli import main


def test_the_collector_settings_during_and_after_a_report(tmp_path, monkeypatch):
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    seen = {}
    real = report.write_report

    def spy(*a, **k):
        seen["threshold"], seen["frozen"] = gc.get_threshold(), gc.get_freeze_count()
        return real(*a, **k)

    monkeypatch.setattr(report, "write_report", spy)
    assert main(["report", "gpt2-small", "-o", str(tmp_path / "r"), "--no-pdf"]) == 0
    assert seen["threshold"][0] == 100_000 and seen["frozen"] > frozen
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_settings_come_back_after_a_failure(tmp_path, monkeypatch):
    before, frozen = gc.get_threshold(), gc.get_freeze_count()

    def boom(*a, **k):
        raise MemoryError

    monkeypatch.setattr(report, "write_report", boom)
    assert main(["report", "gpt2-small", "-o", str(tmp_path / "r"), "--no-pdf"]) != 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    assert not (tmp_path / "r").exists()
