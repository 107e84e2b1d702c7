"""The workload a document assumes: B and T bound (B = 8, T = T_max unless set)."""

from __future__ import annotations

from ..core.errors import SymgptError

#: the workload a report assumes unless B and T are set (the usual B = 8, T = T_max)
DEFAULT_B = 8


def report_model(model):
    """The model with B and its sequence lengths bound for a report (B = 8, each length -- T, or
    an encoder--decoder's T_enc and T_dec -- = T_max unless set)."""
    from ..core.symbols import LENGTHS

    extra = {}
    if "B" not in model.sizes:
        extra["B"] = DEFAULT_B
    lengths = []
    for g in model.arch.stacks():
        for s in sorted(g.length.free_symbols if g.length is not None else (), key=str):
            if s.name in LENGTHS and s.name not in lengths:
                lengths.append(s.name)
    missing = [n for n in lengths if n not in model.sizes]
    if missing:
        if "T_max" not in model.sizes:
            shown = " and ".join(missing)
            example = " ".join(f"--set {n}=2048" for n in missing)
            raise SymgptError(f"{model.name}: set {shown} (the sequence length{'s' if len(missing) > 1 else ''}) "
                              f"for a report, e.g. {example}")
        extra.update({n: int(model.sizes["T_max"]) for n in missing})
    return model.with_(**extra) if extra else model
