"""How many pdflatex passes a PDF takes (symgpt.external.pdflatex): one full pass where one
suffices, the longtable's widths from a quick widths pass, a rerun whenever the document reads
labels back or the widths pass could not help. The oracle: pdflatex run twice by hand on the same
source in the same environment (what LaTeX's own advice, "rerun", gives), compared byte for byte."""

import subprocess
import tempfile
from pathlib import Path

import pytest

import symgpt.external.pdflatex as lb
from symgpt.documents.latex_doc import document
from symgpt.documents.report import report_model
from symgpt.core.notation import notation

import symgpt


def by_hand(source: str, passes: int = 2) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "doc.tex").write_text(source, encoding="utf-8")
        for _ in range(passes):
            subprocess.run([*lb.PDFLATEX, "doc.tex"], cwd=d, env=lb.tex_env(d), capture_output=True, check=True)
        return (d / "doc.pdf").read_bytes()


def built(source: str, monkeypatch) -> tuple[bytes, list[bool]]:
    """The PDF and, per full-pass start, whether a widths pass came first."""
    starts = []
    real = lb.PdfBuild._start

    def start(self, first=False):
        starts.append(lb.widths_source(self.source) is not None if first else False)
        return real(self, first)

    monkeypatch.setattr(lb.PdfBuild, "_start", start)
    with lb.PdfBuild(source, "doc") as b:
        return b.result(), starts


LONG = r"""\documentclass{article}
\usepackage{longtable}
\usepackage{tikz}
\begin{document}
\begin{longtable}{lr}
%s
\end{longtable}
\begin{figure}[h]\centering\tikz\draw (0,0) -- (1,1);\caption{a line}\end{figure}
\end{document}
"""
ROWS = "\n".join(rf"row {i} & {i} \\" for i in range(30))


@pytest.fixture(scope="module")
def report_source():
    return document(report_model(symgpt.load("gpt2-small")), "all", notation("default"))


def test_the_report_is_one_full_pass_and_the_two_pass_pdf(monkeypatch, report_source):
    pdf, starts = built(report_source, monkeypatch)
    assert starts == [True]  # one full pass, after the widths pass
    assert pdf == by_hand(report_source)
    assert by_hand(report_source, 1) != pdf  # one pass alone sets the shapes longtable with other widths


def test_a_failed_widths_pass_costs_a_rerun_not_a_wrong_pdf(monkeypatch, report_source):
    # \tikz outside a figure: the widths pass (no tikz) fails; the full pass asks again
    source = report_source.replace("\\begin{document}", "\\begin{document}\\tikz\\draw (0,0) -- (1,0);", 1)
    pdf, starts = built(source, monkeypatch)
    assert starts == [True, False] and pdf == by_hand(source)


def test_a_document_that_reads_labels_back_is_run_again(monkeypatch):
    source = ("\\documentclass{article}\\begin{document}See section~\\ref{s}.\\section{S}\\label{s}"
              "\\end{document}\n")
    pdf, starts = built(source, monkeypatch)
    assert starts == [False, False] and pdf == by_hand(source)


def test_without_cross_references_one_pass_suffices(monkeypatch):
    source = "\\documentclass{article}\\begin{document}\\section{S}\\label{s}Text.\\end{document}\n"
    pdf, starts = built(source, monkeypatch)
    assert starts == [False] and pdf == by_hand(source)


@pytest.mark.parametrize("log, reads, asks", [
    (lb._LABELS_CHANGED, False, False),
    (lb._LABELS_CHANGED, True, True),
    ("Package longtable Warning: Table widths have changed. Rerun LaTeX.", False, True),
    ("LaTeX Warning: There were undefined references.", False, True),
    ("Output written on doc.pdf (1 page).", True, False),
])
def test_asks_rerun(log, reads, asks):
    assert lb.asks_rerun(log, reads) is asks


def test_widths_source_keeps_the_tables_and_drops_the_graphics():
    source = LONG % ROWS
    w = lb.widths_source(source)
    assert "\\usepackage{longtable}" in w and ROWS in w
    assert "tikz}" not in w and "\\begin{figure}" not in w
    assert lb.widths_source("\\documentclass{article}\\begin{document}x\\end{document}") is None


# --- a streamed build: TeX loads the head (the preamble) from a pipe before the rest exists ----
def streamed(head: str, source: str) -> bytes:
    with lb.PdfBuild(None, "doc", head=head) as b:
        b.feed(source)
        return b.result()


def head_of(source: str) -> str:
    return source.split("\\begin{document}", 1)[0]


def test_a_streamed_report_is_the_two_pass_pdf(report_source):
    # the oracle: pdflatex twice by hand on the whole file
    assert streamed(head_of(report_source), report_source) == by_hand(report_source)


def test_the_reports_head_is_known_before_its_sections(report_source):
    from symgpt.documents.latex_doc import document_head

    head = document_head(report_model(symgpt.load("gpt2-small")))
    assert head == head_of(report_source) and "\\documentclass" in head


def test_a_source_with_another_head_is_built_from_the_start(monkeypatch):
    source = LONG % ROWS
    pdf = streamed("\\documentclass{report}\n", source)  # not the source's head
    assert pdf == by_hand(source)


def test_a_streamed_failed_widths_pass_costs_a_rerun(monkeypatch, report_source):
    source = report_source.replace("\\begin{document}", "\\begin{document}\\tikz\\draw (0,0) -- (1,0);", 1)
    assert streamed(head_of(source), source) == by_hand(source)


def test_a_streamed_error_is_one_line_and_an_unfed_build_stops(tmp_path):
    source = "\\documentclass{article}\n\\undefinedmacro\n\\begin{document}x\\end{document}\n"
    with pytest.raises(lb.SymgptError, match="LaTeX failed on doc.tex: ! Undefined control sequence"):
        streamed(head_of(source), source)
    b = lb.PdfBuild(None, "doc", head="\\documentclass{article}\n")
    proc, folder = b.proc, b.dir
    b.close()  # never fed: TeX, waiting on the pipe, is killed and the folder removed
    assert proc.poll() is not None and not folder.exists()


def test_without_named_pipes_a_streamed_build_starts_when_fed(monkeypatch):
    source = LONG % ROWS
    monkeypatch.delattr(lb.os, "mkfifo")  # as on Windows
    assert streamed(head_of(source), source) == by_hand(source)


# --- streamed a section at a time: TeX sets the first sections while the later are computed -----
def test_a_report_streamed_section_by_section_is_the_two_pass_pdf(monkeypatch):
    model = report_model(symgpt.load("gpt2-small"))
    from symgpt.documents.latex_doc import document_head

    widths_at = []
    real = lb.PdfBuild._widths_pass

    def widths_pass(self, source, *a):
        widths_at.append(source)
        return real(self, source, *a)

    monkeypatch.setattr(lb.PdfBuild, "_widths_pass", widths_pass)
    prefixes = []
    with lb.PdfBuild(None, "doc", head=document_head(model)) as b:
        def progress(prefix, complete):
            prefixes.append((prefix, complete))
            b.extend(prefix, complete)

        source = document(model, "all", notation("default"), progress=progress)
        b.feed(source)
        pdf = b.result()
    assert pdf == by_hand(source)  # the oracle: two full passes by hand on the whole file
    assert all(source.startswith(p) for p, _ in prefixes) and len(prefixes) >= 10
    # the widths pass ran once, on the document as far as its last longtable (the shapes section)
    assert len(widths_at) == 1 and len(widths_at[0]) < len(source) // 3
    assert "\\begin{longtable}" in widths_at[0] and widths_at[0].endswith("\\end{document}\n")


TWO_LONG = r"""\documentclass{article}
\usepackage{longtable}
\begin{document}
\section{One}
\begin{longtable}{lr}
%s
\end{longtable}
\section{Two}
\begin{longtable}{rl}
%s
\end{longtable}
\end{document}
""" % (ROWS, "\n".join(rf"{i} & a much wider cell, row {i} \\" for i in range(30)))


def test_a_longtable_after_a_prefix_said_to_hold_them_all_costs_a_rerun_not_a_wrong_pdf():
    prefix = TWO_LONG[:TWO_LONG.index("\\section{Two}")]
    with lb.PdfBuild(None, "doc", head=head_of(TWO_LONG)) as b:
        b.extend(prefix, widths_complete=True)  # wrong: a second longtable follows
        b.feed(TWO_LONG)
        assert b.result() == by_hand(TWO_LONG)


def test_a_prefix_the_source_does_not_continue_means_a_build_from_the_start():
    head = head_of(TWO_LONG)
    with lb.PdfBuild(None, "doc", head=head) as b:
        b.extend(head + "\\begin{document}\n\\section{Something else}\n", widths_complete=True)
        b.extend(head + "\\begin{document}\n\\section{Not a continuation}\n")  # ignored
        b.feed(TWO_LONG)
        assert b.result() == by_hand(TWO_LONG)


def test_a_prefix_without_a_longtable_runs_no_widths_pass(monkeypatch):
    source = "\\documentclass{article}\n\\begin{document}\n\\section{S}Text.\n\\section{T}More.\n\\end{document}\n"
    with lb.PdfBuild(None, "doc", head=head_of(source)) as b:
        b.extend(source[:source.index("\\section{T}")], widths_complete=True)
        b.feed(source)
        assert b.result() == by_hand(source)
