"""The README runs as written: every console, bash and Python block in README.md is extracted
(tests/readme_blocks.py says how each kind is read) and run by the runner the documentation
site's pages share (tests/docblocks.py; tests/test_docs_site.py runs the pages), and what the
README shows is compared with what runs. Each block is its own test, named ``README.md:LINE``,
and each failure names the README line of the command or statement that failed, so a block
added later (by any branch) is run and checked without touching this file. The README also
keeps the two commands `.ci/run` and a new user type, word for word."""

import re

import pytest

import clirun
import docblocks as db
import readme_blocks as rb

BLOCKS = db.runnable(db.README)


def test_the_readme_has_blocks_of_every_kind():
    kinds = {b.lang for _, b in BLOCKS}
    assert {"console", "bash", "python"} <= kinds, kinds
    assert sum(len(rb.shell_commands(b)) for _, b in BLOCKS if b.lang != "python") >= 5


def test_the_readme_keeps_the_two_commands():
    # the oracle: .ci/run's own command line, and the report command a new user types
    ci = (db.ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    commands = [" ".join(c.words) for _, b in BLOCKS if b.lang == "bash" for c in rb.shell_commands(b)]
    assert ci == "bash scripts/setup.sh --test && python3 -m pytest -n 2"
    assert "bash scripts/setup.sh --test" in commands and "python3 -m pytest -n 2" in commands
    assert "bash scripts/setup.sh" in commands and "symgpt report gpt2-small" in commands
    assert ci in db.README.read_text()


def test_the_readme_links_resolve():
    text = db.README.read_text()
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in links if "://" not in t]
    assert len(local) >= 15, local
    missing = [t for t in local if not (db.ROOT / t).exists()]
    assert not missing, missing
    # every page of the site is reachable from the README, directly or from the site's home page
    home = (db.PAGES / "index.md").read_text()
    named = {(db.ROOT / t).resolve() for t in local} | {(db.PAGES / t).resolve() for t in re.findall(r"\]\(([\w./-]+\.md)", home)}
    unreached = [db.label(p) for p in db.site_pages() if p.resolve() not in named]
    assert not unreached, unreached


@pytest.mark.parametrize("item", BLOCKS, ids=db.block_id)
def test_block_runs_as_written(item, tmp_path):
    db.check_block(item, tmp_path)


def test_the_harness_catches_what_a_reader_would_hit(tmp_path):
    # the oracle: blocks written wrong on purpose, each mistake a reader pasting the README hit
    md = "\n".join([
        "```console", "$ symgpt params gpt2-small --json", "{}", "```",
        "```bash", "symgpt params gpt2-small   # 124,439,809", "symgpt rule gpt2-small params --as d --as V",
        "                            # -0.73 %", "make install", "```",
        "```python", "import symgpt", "symgpt.load('gpt2-small').params.value   # 124439809", "```",
    ])
    bs = rb.blocks(md)
    assert [b.lang for b in bs] == ["console", "bash", "python"] and bs[1].line == 6
    console, bash = rb.shell_commands(bs[0]), rb.shell_commands(bs[1])
    assert console[0].output == ["{}"]
    assert [c.line for c in bash] == [6, 7, 9] and "-0.73 %" in rb.stated_values(bash[1].expect)
    assert rb.stated_values(bash[0].expect) == ["124,439,809"]
    out = clirun.run(["params", "gpt2-small"]).stdout
    assert "124,439,809" not in out and "124,439,808" in out
    assert "-0.73 %" not in clirun.run(["rule", "gpt2-small", "params", "--as", "d", "--as", "V"]).stdout
    assert db.symgpt_argv(bash[2].words) is None and not db.exempt(bash[2].words)
    # the shared runner reports each of those mistakes by the file and line it sits on
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    bad_console = db.shell_failures("page.md", bs[0], db.folder(tmp_path / "a"))
    assert len(bad_console) == 1 and bad_console[0].startswith("page.md:2: symgpt params gpt2-small --json: prints")
    bad_bash = db.shell_failures("page.md", bs[1], db.folder(tmp_path / "b"))
    assert [f.split(":")[1] for f in bad_bash] == ["6", "7", "9"], bad_bash
    bad_python = db.python_failure("page.md", bs[2], db.folder(tmp_path / "c"))
    assert bad_python and "page.md:13: page.md shows '124439809', it gives '124439808'" in bad_python
    assert rb.python_value_comment("124439808, a SymPy Integer") == "124439808"
    assert rb.python_value_comment("one block: 7087872") == "7087872"
    assert rb.python_value_comment("the networkx DiGraph of ops") is None
    assert rb.python_value_comment("12·L·d² + 2·d") == "12·L·d² + 2·d"
    assert rb.value_matches("[(8, 1024), ...]", ["[(8, 1024), (8, 1024, 768)]"])
    assert not rb.value_matches("124439808", ["124439809"])
