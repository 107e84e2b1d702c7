"""symgpt: exact symbolic cost models of Transformers.

>>> import symgpt
>>> from symgpt.symbols import L, d, V, T_max
>>> m = symgpt.load("gpt2-small")
>>> m.params.value                       # exact, a SymPy Integer
124439808
>>> m.params == 12*L*d**2 + 13*L*d + V*d + T_max*d + 2*d
True
"""

from .errors import SymgptError
from .model import Model, load, quantity_names, register_quantity
from .quantity import Quantity
from . import symbols

__all__ = ["SymgptError", "Model", "load", "Quantity", "symbols", "quantity_names", "register_quantity"]
__version__ = "0.1.0"
