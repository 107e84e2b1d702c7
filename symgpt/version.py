"""symgpt's version, importable from every layer."""

__version__ = "0.1.0"
