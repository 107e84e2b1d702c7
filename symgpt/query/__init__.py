"""Queries over derived quantities: rules, dominance, crossovers, ranking, and anyone's formula.

>>> import symgpt
>>> from symgpt.query import rule, dominance, crossover, ranking, holds
>>> m = symgpt.load("gpt2-small")
>>> rule(m.params, ["d", "V"]).rule               # d, V -> oo together (V ∝ d)
12*L*d**2 + V*d
>>> dominance(m.params, "d").share("embedding")   # the embeddings' share as d -> oo
0
>>> bool(holds(m, "params", "12*L*d^2 + 13*L*d + V*d + T_max*d + 2*d"))
True

Every query takes a :class:`~symgpt.derive.quantity.Quantity` (``model.params``,
``model.quantity("flops.forward", ...)``); ``select`` builds one from a
model, a quantity name, a part (path prefixes, comma-separated, as users type them), roles
(``roles=[roles.STACK]``: what code asks for, whatever a family names its nodes) and
``per_block``. Regimes are
given as ``"d"``, ``["d", "V"]``, ``"d,L,V:2"`` (V grows as d²) or a :class:`Regime`.
"""

from .compare import Comparison, check_formula, compare, holds
from .crossover import Crossover, crossover, outside, shift, solve_crossover
from .dominance import Dominance, dominance, share_limit
from .formula import Formula
from .library import Checked, check, check_library, formula
from .published import LIBRARY
from .ranking import Ranked, rank_terms, ranking
from .regime import Regime, graded_terms, leading, order, parse_regime
from .rules import Rule, relative_error, rewrite, rule
from .selection import by_role, only_stack, per_block, restrict, select

__all__ = [
    "Comparison", "check_formula", "compare", "holds",
    "Crossover", "crossover", "outside", "shift", "solve_crossover",
    "Dominance", "dominance", "share_limit",
    "Formula", "Checked", "check", "check_library", "formula", "LIBRARY",
    "Ranked", "rank_terms", "ranking",
    "Regime", "graded_terms", "leading", "order", "parse_regime",
    "Rule", "relative_error", "rewrite", "rule",
    "by_role", "only_stack", "per_block", "restrict", "select",
]
