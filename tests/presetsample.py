"""The presets a sweep over every built-in preset runs in the suite: one for each distinct
structure, a family with its flags. Presets that differ only in their sizes (GPT-2 small .. XL and
the GPT-3 sizes, Qwen3 0.6B .. 32B, Whisper tiny .. large, Mamba 130M .. 2.8B) share one, the
first by name. ``SYMGPT_ALL_PRESETS=1`` runs every preset instead: benchmarks/preset_sweep.py
does, and writes benchmarks/PRESET_SWEEP.md (each size's numbers are held by the tables of
tests/test_presets*.py and the README's)."""

from __future__ import annotations

import os

from symgpt.families import presets


def structure(preset) -> tuple:
    return preset.family, tuple(sorted((k, str(v)) for k, v in (preset.flags or {}).items()))


def sample(by=structure) -> list[str]:
    """Every preset's name under SYMGPT_ALL_PRESETS=1, else one name for each structure (or for
    each value of *by*: ``family_of`` takes one a family)."""
    every = presets()
    if os.environ.get("SYMGPT_ALL_PRESETS") == "1":
        return sorted(every)
    first: dict[tuple, str] = {}
    for name in sorted(every):
        first.setdefault(by(every[name]), name)
    return sorted(first.values())


def family_of(preset) -> str:
    return preset.family
