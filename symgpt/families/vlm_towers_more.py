"""More vision--language models read as a text decoder of a family symgpt already builds and a held
vision tower (the machinery of ``vlm_towers.py``; the towers: ``blocks/vlm_towers.py``).

- Cosmos3 (NVIDIA; transformers' ``Cosmos3OmniForConditionalGeneration``): Qwen3-VL's class
  unchanged under another model_type, read as the ``qwen3_vl`` family.
- Cosmos3 Edge (``Cosmos3EdgeForConditionalGeneration``): the LLaMA block with a squared-ReLU
  up/down MLP (``Cosmos3EdgeTextModel``: the ``arcee`` decoder), a SigLIP2-style tower
  (``Cosmos3EdgeVisionModel``: a linear patch embedding, a table of num_patches positions,
  LayerNorm blocks, a post LayerNorm) and ``Cosmos3EdgePatchMerger`` (a LayerNorm of d_v, then
  Linear(m²·d_v, projector_hidden_size), GELU, Linear(projector_hidden_size, d)).

Images per sequence are the size N_img, read as 0 (N_img > 0 is refused in one line).
"""

from __future__ import annotations

from .base import Extended, Family
from .fields import Fields
from .persimmon import FAMILIES as _PERSIMMON
from .vlm_towers import _HELD, _family, _qwen3_tower, _reader, _siglip_tower, _text

_PROJECTOR_FF = {"tower_projector_ff": "the width of the merging projector's hidden layer (projector_hidden_size; "
                                      "none: m²·d_v)"}


def _with(family, flags: dict, help_: dict):
    """*family* with flags of its own added (their help beside them)."""
    return Family(name=family.name, description=family.description,
                  flags=Extended(family.flags.base, family.flags.changes, {**family.flags.added, **flags}),
                  sizes=family.sizes, optional=family.optional, build=family.build,
                  flag_help=Extended(family.flag_help.base, family.flag_help.changes,
                                     {**family.flag_help.added, **help_}), choices=family.choices)


FAMILIES = (
    _with(_family("cosmos3_edge", "Cosmos3 Edge: a LLaMA decoder with a squared-ReLU up/down MLP, a SigLIP2-style "
                  "tower and a 2×2 merging projector" + _HELD, _text(_PERSIMMON, "arcee"), "siglip",
                  tower_temporal_patch=1, tower_positions=256), {"tower_projector_ff": 11520}, _PROJECTOR_FF),
)


def _cosmos3_edge_top(f: Fields) -> dict:
    # Cosmos3EdgePatchMerger: Linear(m²·d_v, projector_hidden_size), GELU, Linear(projector_hidden_size, d)
    return {"tower_projector_ff": f.int("projector_hidden_size", 11520)}


READERS = {
    "cosmos3_omni": _reader("qwen3_vl", "qwen3", _qwen3_tower([8, 16, 24]), "Cosmos3OmniForConditionalGeneration"),
    "cosmos3_edge": _reader("cosmos3_edge", "arcee", _siglip_tower("cosmos3_edge"),
                            "Cosmos3EdgeForConditionalGeneration", top=_cosmos3_edge_top),
}

PRESETS: tuple = ()
