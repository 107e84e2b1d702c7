"""symgpt: exact symbolic cost models of Transformers.

>>> import symgpt
>>> from symgpt.core.symbols import L, d, V, T_max
>>> m = symgpt.load("gpt2-small")
>>> m.params.value                       # exact, a SymPy Integer
124439808
>>> m.params == 12*L*d**2 + 13*L*d + V*d + T_max*d + 2*d
True

The engine (SymPy) is imported on first use of ``load``, ``Model``, ... so that ``import symgpt``
and ``symgpt --help`` start fast; networkx only when ``Model.graph`` is first asked for (the
derivations hold the graph in ``symgpt.graph.digraph``).
"""

from __future__ import annotations

import importlib

from .core.errors import SymgptError

__all__ = ["SymgptError", "Model", "load", "Quantity", "symbols", "quantity_names", "register_quantity",
           "diagram", "fragment", "document", "scaling_table", "write_report"]
from .version import __version__  # noqa: E402,F401

#: public name -> the module that defines it (imported lazily, on first access)
_LAZY = {"Model": "model.model", "load": "model.model", "quantity_names": "model.model",
         "register_quantity": "model.model", "Quantity": "derive.quantity", "symbols": "core.symbols",
         "query": "query",
         "diagram": "documents.diagrams", "fragment": "documents.latex_doc", "document": "documents.latex_doc",
         "scaling_table": "documents.tables", "write_report": "documents.report"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f".{_LAZY[name]}", __name__)
    value = module if _LAZY[name].rpartition(".")[2] == name else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
