"""The workload a document assumes: B and T bound (B = 8, T = T_max unless set)."""

from __future__ import annotations

from ..errors import SymgptError

#: the workload a report assumes unless B and T are set (the usual B = 8, T = T_max)
DEFAULT_B = 8


def report_model(model):
    """The model with B and T bound for a report (B = 8, T = T_max unless set)."""
    extra = {}
    if "B" not in model.sizes:
        extra["B"] = DEFAULT_B
    if "T" not in model.sizes:
        if "T_max" not in model.sizes:
            raise SymgptError(f"{model.name}: set T (the sequence length) for a report, e.g. --set T=2048")
        extra["T"] = int(model.sizes["T_max"])
    return model.with_(**extra) if extra else model
