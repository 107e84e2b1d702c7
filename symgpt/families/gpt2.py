"""GPT-2 (Radford et al. 2019) and GPT-3 (Brown et al. 2020, the same architecture): pre-LN,
learned positions, a GELU MLP of width 4d, LayerNorm and a tied head, with GPT-2's own flag
vocabulary (``bias``, ``qkv_bias``, ``tied``, ``vocab_multiple``, ``dropout``, ``loss``: aliases of
the decoder's flags, ``blocks/gpt2.py``)."""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

#: GPT-2's own flags and their defaults (GPT-2 as released: tied head, every bias)
FLAGS = {"tied": True, "qkv_bias": True, "bias": True, "vocab_multiple": None,
         "dropout": False, "loss": True}

FLAG_HELP = {
    "tied": "LM head shares the token embedding matrix",
    "qkv_bias": "Q/K/V projections have a bias",
    "bias": "false removes every linear and LayerNorm bias (nanoGPT bias=False)",
    "vocab_multiple": "pad the vocabulary up to a multiple (nanoGPT: 64)",
    "dropout": "dropout layers present (their masks are saved for backward)",
    "loss": "the graph ends in the cross-entropy loss",
}

SIZES = ("L", "d", "h", "V", "T_max")
OPTIONAL = ("d_ff",)  # bound, the MLP's width is the symbol d_ff instead of 4d

FAMILIES = (Family(
    name="gpt2",
    description="GPT-2 / GPT-3: pre-LN, learned positions, GELU FFN, LayerNorm, tied head",
    flags=FLAGS,
    sizes=SIZES,
    optional=OPTIONAL,
    build=partial(Ref("symgpt.families.blocks.gpt2", "build"), sizes=SIZES + OPTIONAL),
    overridden_by={"qkv_bias": ("bias", False)},
    flag_help=FLAG_HELP,
),)


def read(f: Fields):
    """transformers' GPT2Config."""
    f.int("n_ctx", None, optional=True)  # the legacy twin of n_positions
    sizes = {"V": f.int("vocab_size", 50257), "T_max": f.int("n_positions", 1024),
             "d": f.int("n_embd", 768), "L": f.int("n_layer", 12), "h": f.int("n_head", 12)}
    inner = f.int("n_inner", None, optional=True)
    if inner is not None:
        sizes["d_ff"] = inner
    act = f.activation("activation_function", "gelu_new")
    if act not in ("gelu", "gelu_tanh", "gelu_new"):
        f.notes.append(f"activation_function {f.cfg['activation_function']!r}: the gpt2 family "
                       "counts GELU (only elementwise costs differ)")
    for key in ("scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
        f.bool(key, key == "scale_attn_weights")
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true is not supported")
    return "gpt2", {"tied": f.bool("tie_word_embeddings", True)}, sizes


READERS = {"gpt2": Reader(read, ("GPT2LMHeadModel",))}


def _gpt2(name, L, h, d, source, note=""):
    return Preset(name, "gpt2", {"L": L, "h": h, "d": d, "V": 50257, "T_max": 1024}, {}, source, note)


def _gpt3(name, L, h, d, note="", waive=()):
    return Preset(name, "gpt2", {"L": L, "h": h, "d": d, "V": 50257, "T_max": 2048}, {},
                  "Brown et al. 2020, Table 2.1 (GPT-2 architecture, d_ff = 4d)", note, waive)


_GPT2_SRC = "Radford et al. 2019 (GPT-2); sizes of the released checkpoints"

PRESETS = (
    _gpt2("gpt2-small", 12, 12, 768, _GPT2_SRC,
          "the paper's Table 2 says 117M; the released checkpoint has 124,439,808"),
    _gpt2("gpt2-medium", 24, 16, 1024, _GPT2_SRC, "the paper's Table 2 says 345M"),
    _gpt2("gpt2-large", 36, 20, 1280, _GPT2_SRC, "the paper's Table 2 says 762M"),
    _gpt2("gpt2-xl", 48, 25, 1600, _GPT2_SRC, "the paper's Table 2 says 1542M"),
    _gpt3("gpt3-125m", 12, 12, 768),
    _gpt3("gpt3-350m", 24, 16, 1024),
    _gpt3("gpt3-1.3b", 24, 24, 2048,
          "Table 2.1 lists 24 heads of 128 (24 x 128 = 3072 != d_model 2048); "
          "this preset keeps d = 2048 and 24 heads (as scaling tables list it), so d_head = 2048/24 is not "
          "an integer: set h=16 (heads of 128) for a consistent model",
          waive=("heads_divide_width",)),
    _gpt3("gpt3-6.7b", 32, 32, 4096),
    _gpt3("gpt3-13b", 40, 40, 5120,
          "Table 2.1 prints d_model 5140, which 40 heads do not divide; its Table D.1 count "
          "matches 5120, used here"),
    _gpt3("gpt3-175b", 96, 96, 12288),
)
