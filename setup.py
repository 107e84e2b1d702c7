"""Packaging beyond pyproject.toml: the top-level ``templates/`` folder goes into the wheel as
``symgpt/templates/`` (package data, found with ``importlib.resources``); a checkout and an editable
install read the top-level folder itself (``symgpt.render.latex.template_dir``)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["symgpt", "symgpt.*"]), "symgpt.templates"],
    package_dir={"symgpt.templates": "templates"},
    package_data={"symgpt.templates": ["*.tex", "*.html", "*.js", "*.css"]},
)
