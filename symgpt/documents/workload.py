"""The workload a document assumes: B and the sequence lengths bound (B = 8, T = T_max unless
set; an encoder--decoder's T_enc and T_dec = T_max, or its source's pre-training lengths where
the model has no T_max), named in the document's notes when chosen for an encoder--decoder."""

from __future__ import annotations

from ..core.errors import SymgptError

#: the workload a report assumes unless B and T are set (the usual B = 8, T = T_max)
DEFAULT_B = 8

#: family -> (lengths, their source): what a report assumes for an encoder--decoder whose model
#: has no T_max (relative positions). T5: inputs of 512 tokens (Raffel et al. 2020, Sec. 3.1.2:
#: "a maximum sequence length of 512"); span corruption of those inputs (15 % of the tokens,
#: mean span 3; Sec. 3.3.4) leaves targets of 114 tokens, the lengths the T5 code's
#: ``random_spans_helper`` gives for 512-token inputs
PRETRAINING_LENGTHS = {
    "t5": ({"T_enc": 512, "T_dec": 114},
           "T5's pre-training lengths: inputs of 512 tokens (Raffel et al. 2020, Sec. 3.1.2) and the "
           "114-token targets that span corruption (15 % of the tokens, mean span 3) leaves of them "
           "(random_spans_helper of the T5 code)"),
}


def report_model(model):
    """The model with B and its sequence lengths bound for a report (B = 8, each length -- T, or
    an encoder--decoder's T_enc and T_dec -- = T_max unless set; an encoder--decoder without a
    T_max takes its source's pre-training lengths, ``PRETRAINING_LENGTHS``). The lengths chosen
    for an encoder--decoder are named in the model's notes ('set with --set')."""
    from ..core.symbols import LENGTHS

    extra = {}
    if "B" not in model.sizes:
        extra["B"] = DEFAULT_B
    lengths = []
    for g in model.arch.stacks():
        for s in sorted(g.length.free_symbols if g.length is not None else (), key=str):
            # B is no sequence length: a stack over a batch's images packed in one sequence (Pixtral)
            # has B in its length, and B is the batch's (DEFAULT_B above)
            if s.name in LENGTHS and s.name != "B" and s.name not in lengths:
                lengths.append(s.name)
    missing = [n for n in lengths if n not in model.sizes]
    note = None
    if missing:
        known, source = PRETRAINING_LENGTHS.get(model.family.name, ({}, ""))
        if "T_max" in model.sizes:
            extra.update({n: int(model.sizes["T_max"]) for n in missing})
            source = "T_max, the longest sequence its positions allow"
        elif all(n in known for n in missing):
            extra.update({n: known[n] for n in missing})
        else:
            shown = " and ".join(missing)
            example = " ".join(f"--set {n}=2048" for n in missing)
            raise SymgptError(f"{model.name}: set {shown} (the sequence length{'s' if len(missing) > 1 else ''}) "
                              f"for a report, e.g. {example}")
        if len(lengths) > 1:  # an encoder--decoder: say which lengths and why
            chosen = ", ".join(f"{n} = {extra[n]:,}" for n in missing)
            note = f"workload: {chosen} ({source}); set {' or '.join(missing)} to change it"
    model = model.with_(**extra) if extra else model
    if note is not None:
        from ..model.model import Model

        model = Model(model.name, model.family, model.flags, model.sizes, model.preset, model.source,
                      (*model.notes, note))
    return model
