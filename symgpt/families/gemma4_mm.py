"""Gemma 4's multimodal classes (Google 2026; transformers' ``Gemma4ForConditionalGeneration``,
config ``gemma4``, and ``Gemma4UnifiedForConditionalGeneration``, config ``gemma4_unified``)
read as their text decoders (``families/gemma4.py``) when their configuration has no tower:
with ``vision_config`` and ``audio_config`` null, transformers builds no vision or audio model
and the class is its text model (token embedding tied to the LM head). A configuration with
either tower is refused in one line: the towers are not modelled.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .fields import Fields, Reader, note_leftovers, sub_fields


def _read(f: Fields, text_type: str, read_text, name: str):
    for key in ("vision_config", "audio_config"):
        if f.cfg.get(key) is not None:
            raise SymgptError(f"{f.where}: {name}'s {key.split('_')[0]} tower is not modelled ({key} is set; "
                              "symgpt reads this class only without towers, as its text decoder)")
        f.silent(key)
    text = sub_fields(f, "text_config")
    mt = text.cfg.get("model_type", text_type)
    if mt != text_type:
        raise SymgptError(f"{f.where}: a {name} text_config of model_type {str(mt)[:40]!r} is not modelled")
    family, flags, sizes = read_text(text)
    note_leftovers(f, text, "text_config")
    if not f.bool("tie_word_embeddings", True):
        raise SymgptError(f"{f.where}: {name} without tied word embeddings is not modelled")
    f.notes.append(f"no vision or audio tower in this config (vision_config and audio_config are null): "
                   f"{name} is its text decoder, counted as {family}")
    f.silent("audio_token_id", "boa_token_id", "boi_token_id", "eoa_token_index", "eoa_token_id", "eoi_token_id",
             "image_token_id", "video_token_id", "initializer_range", "id2label", "label2id",
             "vision_soft_tokens_per_image", "audio_soft_tokens_per_second")
    return family, flags, sizes


def read_gemma4(f: Fields):
    """transformers' Gemma4Config: text_config (Gemma4TextConfig), vision_config, audio_config."""
    from .gemma4 import read_gemma4_text

    return _read(f, "gemma4_text", read_gemma4_text, "Gemma 4")


def read_gemma4_unified(f: Fields):
    """transformers' Gemma4UnifiedConfig: text_config (Gemma4UnifiedTextConfig), vision_config, audio_config."""
    from .gemma4 import read_gemma4_unified_text

    return _read(f, "gemma4_unified_text", read_gemma4_unified_text, "Gemma 4 (unified)")


FAMILIES: tuple = ()
READERS = {"gemma4": Reader(read_gemma4, ("Gemma4ForConditionalGeneration",)),
           "gemma4_unified": Reader(read_gemma4_unified, ("Gemma4UnifiedForConditionalGeneration",))}
PRESETS: tuple = ()
