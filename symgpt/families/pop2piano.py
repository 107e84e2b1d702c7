"""Pop2Piano (Choi & Lee 2023, "Pop2Piano: Pop Audio-based Piano Cover Generation";
transformers' ``Pop2PianoForConditionalGeneration``): T5 v1.1 (``blocks/t5.py``) whose encoder
reads spectrogram features of width d (``Pop2PianoFeatureExtractor``) after one composer row
(``mel_conditioner``: an (N_composers, d) embedding, ``torch.cat`` in front); the decoder owns the
token table; ``lm_head`` is a matrix of its own (not tied). T_enc counts the composer row.
"""

from __future__ import annotations

from functools import partial

from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader
from .t5 import CHOICES, FLAG_HELP, FLAGS
from .t5 import read as read_t5

FAMILIES = (Family(
    name="pop2piano",
    description="Pop2Piano: T5 v1.1 over audio features after a composer embedding row, untied LM head",
    flags={**FLAGS, "tied": False, "head_scale": True, "ffn": "gated", "activation": "gelu_new", "composers": 21},
    sizes=("L", "L_dec", "d", "h", "d_head", "V", "d_ff"),
    build=partial(Ref("symgpt.families.blocks.t5", "build"), name="pop2piano"),
    flag_help={**FLAG_HELP, "composers": "rows of the composer embedding (composer_vocab_size)",
               "tied": "the LM head shares the token embedding (Pop2Piano: no)",
               "head_scale": "the decoder output is multiplied by d^-1/2 before the LM head (scale_decoder_outputs)"},
    choices=CHOICES),)


#: Pop2PianoConfig's defaults where they differ from T5Config's
DEFAULTS = {"vocab_size": 2400, "feed_forward_proj": "gated-gelu"}


def read(f: Fields):
    """transformers' Pop2PianoConfig (T5Config's fields, composer_vocab_size, scale_decoder_outputs)."""
    f.cfg = {**DEFAULTS, **f.cfg}
    _, flags, sizes = read_t5(f)
    f.notes[:] = [n for n in f.notes if not n.startswith("tie_word_embeddings=false")]  # T5's, not Pop2Piano's
    flags.update(tied=False, head_scale=f.bool("scale_decoder_outputs", True), head="lm",
                 composers=f.int("composer_vocab_size", 21))
    f.notes.append("Pop2Piano's lm_head is a V × d matrix of its own (transformers ties only the encoder's and "
                   "decoder's token tables to shared); the encoder reads T_enc - 1 feature rows after one "
                   "composer row, as Pop2PianoForConditionalGeneration.generate feeds it")
    return "pop2piano", flags, sizes


READERS = {"pop2piano": Reader(read, ("Pop2PianoForConditionalGeneration",))}

PRESETS: tuple = ()
