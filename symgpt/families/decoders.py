"""The decoder families' shared declaration, and the generic ``decoder`` family itself.

Every decoder family (LLaMA, Mistral, Qwen, Gemma, Falcon, ...) is the generic decoder-only
Transformer of ``blocks/decoder.py`` with its own flag defaults: :func:`decoder_family` declares
one from its description and the defaults that differ. The flag table (every flag, its generic
default, choices and help) lives with the builder (``blocks/decoder_flags.py``) and is read on
first use (:class:`~symgpt.families.base.Extended`), so a decoder family's module imports no SymPy.
"""

from __future__ import annotations

from functools import partial

from ..core.lazy import Ref
from .base import Extended, Family

#: the decoder flag tables and the builder, imported on first use
FLAGS = Ref("symgpt.families.blocks.decoder_flags", "FLAGS")
FLAG_HELP = Ref("symgpt.families.blocks.decoder_flags", "FLAG_HELP")
CHOICES = Ref("symgpt.families.blocks.decoder_flags", "CHOICES")
BUILD = Ref("symgpt.families.blocks.decoder", "build")

#: the sizes a decoder must bind, and those it may bind (``blocks/decoder_flags.py``: SIZES, OPTIONAL)
SIZES = ("L", "d", "h", "V")
OPTIONAL = ("d_ff", "h_kv", "d_head", "T_max", "W", "E", "k")


def decoder_family(name: str, description: str, added: dict | None = None, added_help: dict | None = None,
                   help_changes: dict | None = None, choice_changes: dict | None = None, **changes) -> Family:
    """A decoder family: the generic decoder with the flag defaults *changes* (each a flag of the
    decoder's table; an unknown one raises when the flags are first read), built under *name*.
    *added*: flags of the family's own (not in the generic table, so every other graph is left as
    it is), with their help lines *added_help*; *help_changes*, *choice_changes*: a generic flag's
    help line and choices as this family has them."""
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, added), sizes=SIZES,
                  optional=OPTIONAL, build=partial(BUILD, name=name),
                  flag_help=Extended(FLAG_HELP, help_changes, added_help), choices=Extended(CHOICES, choice_changes))


#: a flag the families whose RoPE rotates interleaved pairs add (GLM, Helium, ERNIE 4.5; read by
#: ``blocks/decoder_layers.py``): the same FLOPs; hf-eager builds and keeps each layer's own tables
INTERLEAVED = dict(added={"rotary_interleave": True},
                   added_help={"rotary_interleave": "RoPE rotates interleaved pairs: the same FLOPs; hf-eager "
                                                    "builds and keeps each layer's own cos/sin tables"})

FAMILIES = (decoder_family("decoder", "generic decoder-only Transformer (pre-norm RMSNorm, RoPE, SwiGLU by default)"),)
READERS: dict = {}
PRESETS: tuple = ()


def decoder_family_with(name: str, description: str, added: dict, help: dict, **changes) -> Family:
    """A decoder family with flags of its own besides the generic decoder's: *added* (each new
    flag's default) and *help* (its help line); every other family's flags, and so its graphs, stay
    as they are."""
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, added), sizes=SIZES,
                  optional=OPTIONAL, build=partial(BUILD, name=name), flag_help=Extended(FLAG_HELP, added=help),
                  choices=Extended(CHOICES))
