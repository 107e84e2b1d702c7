"""examples/lecture.ipynb, the notebook a lecturer starts from, runs top to bottom (nbclient,
a real Jupyter kernel) and gives exactly the outputs committed with it: symgpt's outputs are
deterministic, so the committed notebook is what a reader sees. The values it shows are
checked against independent figures here (GPT-2-small's 124,439,808 parameters as transformers
counts them; the rule 12Ld²'s error by hand: 12·12·768² = 84,934,656, and
(84,934,656 - 124,439,808)/124,439,808 = -39,505,152/124,439,808 = -51439/162031, as 768 divides both). Regenerate the
committed outputs with SYMGPT_REGEN_GOLDEN=1."""

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "lecture.ipynb"
SHOWN = ("text/plain", "text/latex", "text/markdown", "image/svg+xml", "text/html")


def outputs(nb) -> list:
    """What each code cell shows (its stream text and display data), without execution counts."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        shown = []
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                shown.append((o.name, o.text))
            elif o.output_type in ("execute_result", "display_data"):
                shown.append({k: v for k, v in o.data.items() if k in SHOWN})
            else:
                shown.append((o.output_type, o.get("ename"), o.get("evalue")))
        out.append(shown)
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """The kernel's working folder (Jupyter's is the notebook's: the page is written there)."""
    return tmp_path_factory.mktemp("notebook")


@pytest.fixture(scope="module")
def executed(run_dir):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    fresh = copy.deepcopy(nb)
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), env_path]) if env_path else str(ROOT)
    try:
        NotebookClient(fresh, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(run_dir)}}).execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    if os.environ.get("SYMGPT_REGEN_GOLDEN"):
        for cell in fresh.cells:
            if cell.cell_type == "code":
                cell.execution_count = None
                for o in cell.outputs:
                    if "execution_count" in o:
                        o.execution_count = None
        nbformat.write(fresh, NOTEBOOK)
        nb = fresh
    return nb, fresh


def test_the_notebook_runs_and_gives_its_committed_outputs(executed):
    committed, fresh = executed
    assert all(o for o in outputs(committed)), "a committed code cell has no output"
    errors = [o for cell in outputs(fresh) for o in cell if isinstance(o, tuple) and o[0] == "error"]
    assert not errors, errors
    assert outputs(fresh) == outputs(committed), "the notebook's outputs changed; if intended, regenerate"


def test_the_notebook_shows_what_a_lecture_needs(executed):
    _, nb = executed
    shown = outputs(nb)
    flat = [o for cell in shown for o in cell]
    kinds = {k for o in flat if isinstance(o, dict) for k in o}
    assert {"text/latex", "image/svg+xml"} <= kinds, kinds            # mathematics and the graph
    text = "\n".join(str(v) for o in flat for v in (o.values() if isinstance(o, dict) else o[1:]))
    assert "124439808" in text                                           # GPT-2-small (transformers' count)
    assert "-51439/162031" in text                                       # the rule's error, by hand
    assert "-906,240" in text                     # Vd + 12Ld² + 2d misses 13·L·d + T_max·d = 119,808 + 786,432
    assert "\\begin{align*}" in text                                     # LaTeX to paste
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for needed in ("symgpt.load", "scaling_table", "symgpt.diagram", "rule(", "dominance(", "holds("):
        assert needed in sources, needed


def test_the_notebook_shows_the_page(executed, run_dir):
    """The last cell writes the interactive page next to the notebook and shows it in an iframe:
    the file is the page ``symgpt html gpt2-small`` writes, byte for byte."""
    import symgpt
    from symgpt.documents.html import html

    _, nb = executed
    last = outputs(nb)[-1]
    assert any('<iframe src="gpt2-small.html"' in o.get("text/html", "") for o in last if isinstance(o, dict)), last
    page = run_dir / "gpt2-small.html"
    assert page.read_text(encoding="utf-8") == html(symgpt.load("gpt2-small"))
    assert 'data-option="hardware"' in page.read_text(encoding="utf-8")
