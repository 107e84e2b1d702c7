"""``--freeze``: train a vision--language or speech--language model with its tower, its projector
or its language model frozen (``symgpt.derive.freeze``); shared by ``params``, ``flops``,
``memory``, ``time`` and ``plan`` beside ``--finetune``."""

from __future__ import annotations


def add_freeze(p) -> None:
    p.add_argument("--freeze", default=None, metavar="LIST",
                   help="parts of a vision- or speech-language model trained frozen (requires_grad_(False)): "
                        "vision, audio, projector, language, separated by commas (e.g. vision, or "
                        "vision,language to train the projector alone): no gradients or optimizer state for "
                        "them; a frozen tower saves no activations and has no backward")


def freeze_model(args, m):
    """*m* with the parts --freeze names frozen (*m* itself without --freeze)."""
    text = getattr(args, "freeze", None)
    if text is None:
        return m
    from ..core.errors import SymgptError

    method = getattr(args, "finetune", None)
    if method not in (None, "full"):
        raise SymgptError(f"--freeze with --finetune {method} is not modelled (the adapters' targets inside a "
                          "tower); --finetune full or none trains every part --freeze leaves")
    from ..derive.freeze import Freeze, apply

    return apply(m, Freeze.parse(text))
