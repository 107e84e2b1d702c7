"""An encoder--decoder's report picks a documented workload, as every other family's does
(B = 8; T_enc and T_dec = T_max, or the source's pre-training lengths where the model has no
T_max), names it in the report, and --set changes it.

Oracles: T5's lengths recomputed here from the span-corruption arithmetic of the T5 code
(``random_spans_helper``: 15 % of the tokens corrupted, mean span 3, inputs of 512 tokens,
Raffel et al. 2020, Sec. 3.1.2 and 3.3.4); BART's T_max is its config's max_position_embeddings
(1024, facebook/bart-base).
"""

from __future__ import annotations

import json
from pathlib import Path

import symgpt
import symgpt.documents.report
import symgpt.documents.reportparts.core
import symgpt.documents.reportparts.latex
from symgpt.cli import main
from symgpt.documents.workload import report_model

ROOT = Path(__file__).resolve().parent.parent


def t5_lengths(inputs_length=512, noise_density=0.15, mean_noise_span_length=3.0):
    """The T5 code's random_spans_helper: the encoder and decoder lengths of span corruption for
    *inputs_length*-token inputs."""
    def lengths(tokens):
        noise = int(round(tokens * noise_density))
        spans = int(round(noise / mean_noise_span_length))
        return tokens - noise + spans + 1, noise + spans + 1

    tokens = inputs_length - 1
    while lengths(tokens + 1)[0] <= inputs_length:
        tokens += 1
    return lengths(tokens)


def test_t5_takes_its_pretraining_lengths():
    enc, dec = t5_lengths()
    assert (enc, dec) == (512, 114)
    m = report_model(symgpt.load("t5-small"))
    assert (m.sizes["B"], m.sizes["T_enc"], m.sizes["T_dec"]) == (8, enc, dec)
    note = m.notes[-1]
    assert note.startswith(f"workload: T_enc = {enc}, T_dec = {dec} (T5's pre-training lengths")
    assert "Raffel et al. 2020, Sec. 3.1.2" in note


def test_set_changes_it():
    m = report_model(symgpt.load("t5-small", T_enc=1024))
    assert (m.sizes["T_enc"], m.sizes["T_dec"]) == (1024, 114)
    assert m.notes[-1].startswith("workload: T_dec = 114 (")
    m = report_model(symgpt.load("t5-small", T_enc=64, T_dec=32))
    assert (m.sizes["T_enc"], m.sizes["T_dec"]) == (64, 32)
    assert not any(n.startswith("workload:") for n in m.notes)


def test_bart_takes_its_max_positions():
    cfg = json.loads((ROOT / "tests" / "configs" / "encdec" / "bart-base.json").read_text())
    m = report_model(symgpt.load("bart-base"))
    assert m.sizes["T_enc"] == m.sizes["T_dec"] == cfg["max_position_embeddings"] == 1024
    assert m.notes[-1] == ("workload: T_enc = 1,024, T_dec = 1,024 (T_max, the longest sequence its "
                           "positions allow); set T_enc or T_dec to change it")


def test_decoders_get_no_workload_note():
    m = report_model(symgpt.load("gpt2-small"))
    assert (m.sizes["B"], m.sizes["T"]) == (8, 1024) and m.notes == symgpt.load("gpt2-small").notes


def test_the_report_of_t5_small_builds_and_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(symgpt.documents.report, "REPORT_PARTS",
                        (symgpt.documents.reportparts.latex, symgpt.documents.reportparts.core))
    assert main(["report", "t5-small", "--no-pdf", "-o", str(tmp_path / "r")]) == 0, capsys.readouterr().err
    index = (tmp_path / "r" / "index.md").read_text()
    assert "B = 8, T_enc = 512, T_dec = 114" in index
    params = (tmp_path / "r" / "params.md").read_text()
    assert "workload: T\\_enc = 512, T\\_dec = 114" in params and "Raffel et al. 2020" in params
    tex = (tmp_path / "r" / "latex" / "report.tex").read_text()
    assert "Workload: T\\_enc = 512, T\\_dec = 114 (T5's pre-training lengths" in tex
    assert "& encoder sequence length & $512$" in tex and "& decoder sequence length & $114$" in tex
    assert main(["report", "t5-small", "--no-pdf", "--set", "T_dec=200", "-o", str(tmp_path / "s")]) == 0
    index = (tmp_path / "s" / "index.md").read_text()
    assert "T_dec = 200" in index and "T_enc = 512" in index and "T_dec = 114" not in index
