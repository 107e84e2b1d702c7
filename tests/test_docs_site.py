"""The documentation site (MkDocs, docs/mkdocs.yml, one page per task under docs/pages/) builds
with ``--strict``: every page is in the navigation, every internal link and anchor resolves, and
the API reference is generated from the docstrings. Every console, bash and Python block of every
page runs as written, through the README's runner (tests/docblocks.py): each block is its own
test, named ``docs/pages/PAGE.md:LINE``, and a failure names the page and line."""

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import docblocks as db
import readme_blocks as rb

CONFIG = db.ROOT / "docs" / "mkdocs.yml"
BLOCKS = [item for page in db.site_pages() for item in db.runnable(page)]


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    # not -q: a quiet build drops the warnings that --strict counts, and passes with broken links
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=600)


def _nav_files(nav) -> list[str]:
    out = []
    for entry in nav:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            out += _nav_files(value) if isinstance(value, list) else [value]
    return out


def _config() -> dict:
    # the config's own tags (none today) would need mkdocs' loader; plain YAML is what it holds
    return yaml.safe_load(CONFIG.read_text())


def test_the_site_builds_strict(tmp_path):
    r = _build(CONFIG, tmp_path / "site")
    assert r.returncode == 0 and "WARNING" not in r.stderr, r.stderr[-3000:]
    pages = {p.relative_to(db.PAGES).as_posix() for p in db.site_pages()}
    # every page is in the navigation, and docs/DESIGN.md is the page design.md (docs/hooks.py)
    assert set(_nav_files(_config()["nav"])) == pages | {"design.md"}
    assert "tests/test_layers.py" in (tmp_path / "site" / "design.html").read_text()
    for page in pages:
        assert (tmp_path / "site" / page.replace(".md", ".html")).is_file(), page
    api = (tmp_path / "site" / "api.html").read_text()
    # the reference is generated from the docstrings: load's and holds' own first lines are on the page
    for name, obj in (("load", "symgpt.model.model"), ("holds", "symgpt.query.compare")):
        module = __import__(obj, fromlist=[name])
        first = getattr(module, name).__doc__.strip().splitlines()[0]
        words = " ".join(re.sub(r"``|`|\*|:class:", "", first).split()[:3])
        assert words in re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", api))), (name, words)


def test_a_broken_link_fails_the_build(tmp_path):
    # the oracle: a copy of the site with one link to a page that does not exist, and one to an
    # anchor that does not exist (the API page and its plugin left out, to keep it quick)
    cfg = _config()
    cfg["plugins"] = ["search"]
    pages = tmp_path / "pages"
    pages.mkdir()
    for p in db.PAGES.rglob("*"):
        if p.is_file() and p.name != "api.md":
            dest = pages / p.relative_to(db.PAGES)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(p.read_bytes())
    (pages / "api.md").write_text("# Python API\n")
    cfg["docs_dir"] = str(pages)
    cfg["hooks"] = [str(CONFIG.parent / h) for h in cfg["hooks"]]
    (tmp_path / "ok.yml").write_text(yaml.safe_dump(cfg))
    r = _build(tmp_path / "ok.yml", tmp_path / "s0")
    assert r.returncode == 0, r.stderr[-2000:]
    for bad, said in (("[a page](no-such-page.md)", "no-such-page.md"), ("[a part](sizing.md#no-such-part)", "no-such-part")):
        (pages / "api.md").write_text(f"# Python API\n\nSee {bad}.\n")
        r = _build(tmp_path / "ok.yml", tmp_path / "s1")
        assert r.returncode != 0 and said in r.stderr, r.stderr[-2000:]


def test_the_pages_have_blocks_of_every_kind():
    kinds = {b.lang for _, b in BLOCKS}
    assert {"console", "bash", "python"} <= kinds, kinds
    assert sum(len(rb.shell_commands(b)) for _, b in BLOCKS if b.lang != "python") >= 140


@pytest.mark.parametrize("item", BLOCKS, ids=db.block_id)
def test_block_runs_as_written(item, tmp_path):
    db.check_block(item, tmp_path)
