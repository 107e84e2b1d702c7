"""What several test files share: golden-file checks and compiling a LaTeX file to its text."""

import os
import re
import subprocess
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
LATEXMK = ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error"]


def golden(name: str, actual: str) -> None:
    """*actual* equals tests/golden/NAME; ``SYMGPT_REGEN_GOLDEN=1`` rewrites the file instead."""
    path = GOLDEN / name
    if os.environ.get("SYMGPT_REGEN_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with SYMGPT_REGEN_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8"), f"{name} changed; if intended, regenerate"


def compile_tex(tex: Path, layout: bool = False) -> tuple[int, str, str]:
    """Run latexmk on *tex* in its folder: (exit code, log or stdout, the PDF's text or '')."""
    r = subprocess.run([*LATEXMK, tex.name], cwd=tex.parent, capture_output=True, text=True,
                       timeout=240, stdin=subprocess.DEVNULL)
    log_file = tex.with_suffix(".log")
    log = log_file.read_text(errors="replace") if log_file.exists() else r.stdout
    pdf = tex.with_suffix(".pdf")
    args = ["pdftotext", *(["-layout"] if layout else []), str(pdf), "-"]
    text = subprocess.run(args, capture_output=True, text=True).stdout if pdf.exists() else ""
    return r.returncode, log, text


def pdf_words(tex: Path) -> str:
    """Compile *tex* (asserting success) and return its PDF's text with whitespace collapsed."""
    code, log, text = compile_tex(tex)
    assert code == 0, log[-3000:]
    return re.sub(r"\s+", " ", text)


def chromium():
    """A headless Chromium driven by Selenium (``scripts/setup.sh --test`` installs both); quit it."""
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    assert binary and driver, "install chromium and chromium-driver (bash scripts/setup.sh --test)"
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        o.add_argument(a)
    o.binary_location = binary
    return webdriver.Chrome(service=Service(driver), options=o)
