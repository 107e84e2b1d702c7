"""Run the symgpt command line in this process (no interpreter start-up per command): the
README and public-source tests run dozens of commands. Same exit codes and streams as
``python3 -m symgpt``; COLUMNS sets the terminal width the command sees."""

import contextlib
import io
import os
from dataclasses import dataclass

from symgpt.cli import main


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run(argv: list[str], cwd=None, columns: int = 80) -> Result:
    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_cols = os.getcwd(), os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as e:  # --help
                code = e.code if isinstance(e.code, int) else 0
    finally:
        os.chdir(old_cwd)
        if old_cols is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old_cols
    return Result(code, out.getvalue(), err.getvalue())
