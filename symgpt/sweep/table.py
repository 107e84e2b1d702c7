"""A sweep's rows as a table (column -> NumPy array; ``"#"`` holds each row's flat grid index),
the exact top-K of a table, and its CSV text. Shared by the in-process loop and the Dask tasks,
so both write the same bytes."""

from __future__ import annotations

import csv
import io
from typing import Mapping, Sequence

import numpy as np


def csv_header(header: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(header)
    return buf.getvalue()


def csv_rows(header: Sequence[str], table: Mapping[str, np.ndarray]) -> str:
    """The rows of *table* as CSV lines (no header)."""
    cells = [_cells(table[h]) for h in header]
    if all(table[h].dtype != object for h in header):  # digits only: no quoting
        return "\n".join(map(",".join, zip(*cells))) + "\n"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(zip(*cells))
    return buf.getvalue()


def _cells(column: np.ndarray) -> list[str]:
    """Column values as text: ints as digits, fractions as p/q, bools as true/false."""
    if column.dtype != object:
        return column.astype(str).tolist()
    return [_cell(v) for v in column.tolist()]


def _cell(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)  # an int, or an exact fraction p/q


def concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The rows of *parts*, one after the other (int64 and exact columns mix into exact ones)."""
    if len(parts) == 1:
        return parts[0]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def top(table: dict[str, np.ndarray], by: str, k: int, smallest: bool) -> dict[str, np.ndarray]:
    """The *k* rows with the largest (smallest) *by*; ties keep grid order (the ``"#"`` column).
    The order is total, so the top K of any split of the rows, merged, is the same table."""
    key, flat = table[by], table["#"]
    if key.dtype != object:
        if len(key) > k:  # only the rows at or beyond the k-th value (ties included) compete
            cut = np.partition(key, k - 1)[k - 1] if smallest else np.partition(key, len(key) - k)[len(key) - k]
            near = np.flatnonzero(key <= cut if smallest else key >= cut)
            key, flat, table = key[near], flat[near], {c: v[near] for c, v in table.items()}
        order = np.lexsort((flat, key if smallest else -key))[:k]
    else:
        sign = 1 if smallest else -1
        order = np.array(sorted(range(len(key)), key=lambda i: (sign * key[i], flat[i]))[:k], dtype=np.int64)
    return {c: v[order] for c, v in table.items()}
