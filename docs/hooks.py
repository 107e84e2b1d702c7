"""MkDocs hooks of the documentation site (docs/mkdocs.yml): docs/DESIGN.md, the contributors'
map of the code, is also the site's page ``design.md``, read from where it lives."""

from pathlib import Path

from mkdocs.structure.files import File

DESIGN = Path(__file__).resolve().parent / "DESIGN.md"


def on_files(files, config):
    files.append(File.generated(config, "design.md", abs_src_path=str(DESIGN)))
    return files
