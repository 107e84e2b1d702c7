"""Run one Python block of the README or a documentation page (its text on stdin) statement by
statement, in a fresh interpreter, and check every value a comment states (see
tests/readme_blocks.py). Arguments: the block's first line and the file's name (README.md when
none). Exit 1 with one line per mismatch, naming the file and line."""

import ast
import io
import sys
import tokenize

import readme_blocks as rb


def main() -> int:
    src = sys.stdin.read()
    first = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    name = sys.argv[2] if len(sys.argv) > 2 else "README.md"
    comments = {t.start[0]: t.string[1:].strip() for t in tokenize.generate_tokens(io.StringIO(src).readline)
                if t.type == tokenize.COMMENT}
    ns: dict = {"__name__": "__readme__"}
    bad = []
    for stmt in ast.parse(src).body:
        line = first + stmt.lineno - 1
        if isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), f"{name}:{line}", "eval"), ns)
            want = rb.python_value_comment(comments.get(stmt.end_lineno, ""))
            if want is not None:
                from symgpt.core.numtext import expr_text

                shown = [str(value), repr(value)]
                try:
                    shown.append(expr_text(value))
                except Exception:  # not a SymPy value
                    pass
                if not rb.value_matches(want, shown):
                    bad.append(f"{name}:{line}: {name} shows {want!r}, it gives {shown[0][:300]!r}")
        else:
            exec(compile(ast.Module([stmt], []), f"{name}:{line}", "exec"), ns)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
