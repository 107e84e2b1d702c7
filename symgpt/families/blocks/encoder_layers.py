"""Small pieces the families share: the activation op a flag names, and an encoder--decoder's LM
head. Attention is declared by ``families/attention.py`` and the FFN by ``families/ffn.py``, for
every family.
"""

from __future__ import annotations

from ... import ops
from ...graph import roles as R
from ...core.symbols import V, d


def activation(name: str) -> ops.Op:
    """An activation op by the families' flag value (``gelu_new``: transformers' composite tanh-GELU)."""
    return {"silu": ops.SiLU(), "gelu": ops.GELU(approximate="none"),
            "gelu_tanh": ops.GELU(approximate="tanh"), "relu": ops.ReLU(), "relu2": ops.ReLU2(),
            "gelu_new": ops.GELU(approximate="tanh", composite=True), "xielu": ops.XIELU()}[name]


def lm_head(g, flags, y):
    """An encoder--decoder's LM head over the decoder's output (tied to the ``shared`` token table
    when ``flags["tied"]``), the loss when ``flags["loss"]``, and the built graph."""
    tie = {"weight": g.param("shared")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), y, tie=tie, role=R.HEAD,
                  label="logits")                                                                  # (B, T_dec, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, role=R.LOSS, label="loss") if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
