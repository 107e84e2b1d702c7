"""The original Transformer (Vaswani et al. 2017): BART's post-LN encoder-decoder
(``blocks/bart.py``) with sinusoidal positions, no LayerNorm of the embeddings, a ReLU FFN and token
embeddings scaled by sqrt(d), shared with the pre-softmax layer (Sec. 3.4). No config.json reader:
its presets come from the paper."""

from __future__ import annotations

from functools import partial

from .base import Family, Preset
from .bart import BUILD, CHOICES, FLAG_HELP, FLAGS

FAMILIES = (Family(
    name="transformer",
    description="the original Transformer (Vaswani et al. 2017): post-LN encoder-decoder, "
                "sinusoidal positions, ReLU FFN, embeddings × √d shared with the head",
    flags={**FLAGS, "positions": "sinusoidal", "embed_norm": False, "embed_scale": True, "activation": "relu"},
    sizes=("L", "L_dec", "d", "h", "V", "d_ff"), build=partial(BUILD, name="transformer"),
    flag_help=FLAG_HELP, choices=CHOICES),)

READERS: dict = {}

_VASWANI = ("Vaswani et al. 2017 (Attention Is All You Need), Table 3; shared source-target "
            "vocabulary (Sec. 5.1, Sec. 3.4)")
_VOCAB_NOTE = ("assumption: a shared source-target vocabulary of V = 37,000 tokens (the paper's "
               "WMT 2014 English-German byte-pair vocabulary, 'about 37000 tokens', Sec. 5.1), tied to both "
               "embeddings and the pre-softmax layer (Sec. 3.4); every linear layer and LayerNorm has a "
               "bias (the paper does not say). The paper's Table 3 rounds the count to {paper}; "
               "symgpt's exact count under these assumptions is {exact}")

PRESETS = (
    Preset("transformer-base", "transformer", {"L": 6, "L_dec": 6, "h": 8, "d": 512, "d_ff": 2048, "V": 37000},
           source=_VASWANI, note=_VOCAB_NOTE.format(paper="65M", exact="63,082,496")),
    Preset("transformer-big", "transformer", {"L": 6, "L_dec": 6, "h": 16, "d": 1024, "d_ff": 4096, "V": 37000},
           source=_VASWANI, note=_VOCAB_NOTE.format(paper="213M", exact="214,245,376")),
)
