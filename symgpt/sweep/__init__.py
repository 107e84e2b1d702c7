"""Sweeps: derived quantities evaluated exactly, vectorised with NumPy, over grids of sizes.

>>> from symgpt.sweep import sweep
>>> r = sweep("gpt2-small", ["L=12,24"], columns=["params"])
>>> r.rows
[[12, 124439808], [24, 209494272]]
"""

from . import dask_chunks
from .grid import MAX_POINTS, Axis, Grid, parse_axis
from .run import Execution, Progress, Ranking, SweepResult, quantity_names, sweep, write_csv

__all__ = ["Axis", "Execution", "Grid", "MAX_POINTS", "Progress", "Ranking", "SweepResult", "parse_axis", "quantity_names", "sweep", "write_csv"]
