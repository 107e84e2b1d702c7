"""References to objects of symgpt's own modules, imported on first use.

``symgpt params gpt2-small`` needs one family and one derivation; importing every family and
every derivation module would double the time symgpt itself adds to importing SymPy. So the
registries that name them (``symgpt.families.MODULES``, a family's builder, ``symgpt.model.model.QUANTITIES``) hold
:class:`Ref` objects: ``Ref("symgpt.derive.flops", "forward").get()`` imports the module the
first time and returns the object. Nothing is swallowed: a missing module or name raises as a
plain import would. The tables stay explicit, and ``tests/test_layers.py`` reads every
``Ref("symgpt....")`` written in the source as an import of that module, so lazy references
obey the layers (``symgpt.core.import_layers``) like plain imports.
"""

from __future__ import annotations

import importlib

_UNSET = object()


class Ref:
    """The object *name* of module *module* (the module itself when *name* is None), called with
    *args* when they are given (a provider made by a factory). Resolved once, then kept."""

    __slots__ = ("module", "name", "args", "_value")

    def __init__(self, module: str, name: str | None = None, args: tuple = ()):
        self.module, self.name, self.args = module, name, tuple(args)
        self._value = _UNSET

    def get(self):
        if self._value is not _UNSET:
            return self._value
        value = importlib.import_module(self.module)
        if self.name is not None:
            value = getattr(value, self.name)
            if self.args:
                value = value(*self.args)
        self._value = value
        return value

    def __call__(self, *args, **kwargs):
        """Call the object (a family's build function named lazily: ``Ref(module, "build")``)."""
        return self.get()(*args, **kwargs)

    def __repr__(self) -> str:
        what = self.module + (f".{self.name}" if self.name else "")
        return f"Ref({what}{'(' + ', '.join(map(repr, self.args)) + ')' if self.args else ''})"
