"""Architecture families, declared as data on the op catalog.

A family's module registers its families when it is imported, and it is imported on first use:
``family("vit")`` imports ``symgpt.families.vit`` alone (``symgpt params gpt2-small`` never
imports the encoders), ``families()`` imports every module of the table. ``MODULES`` is that
table, explicit: a module missing or failing to import raises.
"""

from ..core.errors import SymgptError
from ..core.lazy import Ref
from . import base as _base
from .base import Family  # noqa: F401

_NAMED = Ref("symgpt.families.named")
_DEEPSEEK = Ref("symgpt.families.deepseek")
_BERT = Ref("symgpt.families.bert")
_T5 = Ref("symgpt.families.t5")
_BART = Ref("symgpt.families.bart")
_VIT = Ref("symgpt.families.vit")

#: built-in family name -> the module that registers it, in the order ``families()`` lists them
#: (``tests/test_lazy.py`` holds it to what each module registers)
MODULES = {
    **dict.fromkeys(("gpt2", "decoder", "llama", "mistral", "mixtral", "qwen2", "gemma", "phi3", "falcon",
                     "gpt_neox", "opt", "qwen3", "qwen2_moe", "qwen3_moe", "gemma2", "gemma3_text", "phi",
                     "starcoder2", "olmo2"), _NAMED),
    "deepseek_v3": _DEEPSEEK, "deepseek_v2": _DEEPSEEK,
    "bert": _BERT, "roberta": _BERT, "distilbert": _BERT,
    "t5": _T5,
    "bart": _BART, "transformer": _BART,
    "vit": _VIT,
}


def family(name: str) -> Family:
    """The family *name* (its module imported if need be)."""
    if name in MODULES:
        MODULES[name].get()
    found = _base.registered().get(name)
    if found is None:
        raise SymgptError(f"unknown family {name!r}; known: {', '.join(sorted(families()))}")
    return found


def families() -> dict[str, Family]:
    """Every family: the built-in ones in table order, then those registered by the user."""
    for ref in MODULES.values():
        ref.get()
    reg = _base.registered()
    return {**{n: reg[n] for n in MODULES if n in reg}, **reg}


def register_family(fam: Family) -> Family:
    """Register your own family (a name a built-in family has already raises)."""
    if fam.name in MODULES:
        MODULES[fam.name].get()  # the built-in family of that name first: the clash raises now
    return _base.register_family(fam)
