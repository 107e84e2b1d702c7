"""Shared test setup: the oracles package (tests/oracles) is importable as ``oracles``."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# Subprocesses (the CLI run as `python -m symgpt`) import this checkout's symgpt, whatever
# symgpt an editable install points at (a git worktree, a fresh clone).
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)

# Terminal text wraps to the terminal's width (COLUMNS first): the tests' golden outputs are
# those of a 100-column terminal, whatever terminal runs pytest.
os.environ["COLUMNS"] = "100"

# Tests never touch the network: a Hub id in any test (the attack suites' "1/0" looks like
# org/name) is looked up in the Hub cache only, and fails at once with symgpt's one-line error.
# tests/test_hub.py prepares caches and replaces the download functions where it needs answers.
os.environ["HF_HUB_OFFLINE"] = "1"

# The derivation cache (symgpt.core.cache) of every test process and its subprocesses lives in a
# temporary folder, removed at exit: nothing is written into the user's ~/.cache.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

_CACHE = tempfile.mkdtemp(prefix="symgpt-test-cache-")
os.environ["SYMGPT_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """No silent skips: CI installs everything the tests need, so a skipped test (a missing oracle
    such as torch, transformers or peft) is reported as a failure, with its reason."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, and this suite never skips (install the test extra): {report.longrepr}"
