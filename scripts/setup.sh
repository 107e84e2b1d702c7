#!/usr/bin/env bash
# Install everything symgpt needs on a fresh Debian machine (run as root, Python 3.11):
#   bash scripts/setup.sh          # symgpt, Graphviz's dot, a TeX Live for the PDF report
#   bash scripts/setup.sh --test   # also the test tools and oracles (torch 2.13.0 CPU, transformers,
#                                  # nbclient/nbformat/ipykernel for the notebook, MkDocs for the
#                                  # documentation site: the [test] extra)
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v dot >/dev/null 2>&1 || need+=(graphviz)
command -v latexmk >/dev/null 2>&1 || need+=(latexmk)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
kpsewhich siunitx.sty >/dev/null 2>&1 || need+=(texlive-science)
kpsewhich booktabs.sty >/dev/null 2>&1 || need+=(texlive-latex-recommended)
kpsewhich pgfplots.sty >/dev/null 2>&1 || need+=(texlive-pictures)
kpsewhich adjustbox.sty >/dev/null 2>&1 || need+=(texlive-latex-extra)  # adjustbox, needspace
if [ "${1:-}" = "--test" ]; then
  # the interactive page is tested in a real headless browser (Debian's Chromium and its driver)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root to install ${need[*]} (apt-get)" >&2; exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

python3 -m pip install -q --upgrade pip >/dev/null 2>&1 || true
# a new `python3 -m venv` is seeded with setuptools 65, which cannot build wheels (no bdist_wheel):
# an editable install without build isolation (tests/test_wheel.py) needs a newer one and `wheel`
python3 -m pip install -q --upgrade 'setuptools>=68' wheel
if [ "${1:-}" = "--test" ]; then
  # torch is pinned: 2.13.0 (CPU) installs from a local file; an unpinned torch is a multi-GB CUDA build
  python3 -m pip install -q -e '.[test]' 'torch==2.13.0'
else
  python3 -m pip install -q -e .
fi
