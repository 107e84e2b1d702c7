"""UDOP (Tang et al. 2023; transformers' ``UdopForConditionalGeneration``): T5's encoder-decoder
with its layout and image modules held (``blocks/udop.py``): every parameter counted, the forward
over token ids (without boxes or an image); the cost of an image and of the 2D layout biases is not
modelled (N_img must be 0).
"""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family
from .fields import Fields, Reader
from .t5 import CHOICES, FLAG_HELP, FLAGS

_ADDED = {"cell_positions": 1024, "layout_biases": 2, "layout_bias_buckets": 32}
_ADDED_HELP = {"cell_positions": "rows of the encoder's x and y cell tables (max_2d_position_embeddings)",
               "layout_biases": "relative-bias tables of relative_bias_args after the first, per stack",
               "layout_bias_buckets": "rows of each of those tables (relative_attention_num_buckets)"}

FAMILIES = (Family(name="udop", description="UDOP: T5's encoder-decoder with patch embeddings, 2D cell embeddings "
                   "and layout relative biases (held: boxes and images are not modelled)",
                   flags={**FLAGS, **_ADDED, "head_scale": False},
                   sizes=("L", "L_dec", "d", "h", "d_head", "V", "d_ff", "P_patch", "C_img", "N_img"),
                   build=Ref("symgpt.families.blocks.udop", "build"),
                   flag_help={**FLAG_HELP, **_ADDED_HELP}, choices=CHOICES),)

_BIAS_KEYS = {"type", "num_heads", "scaling_factor", "max_distance", "augmentation", "level"}


def read(f: Fields):
    """transformers' UdopConfig: T5Config's fields and the layout and image ones."""
    from .t5 import read as read_t5

    layout = {k: f.cfg[k] for k in ("max_2d_position_embeddings", "image_size", "patch_size", "num_channels",
                                    "relative_bias_args") if k in f.cfg}
    t = Fields({k: v for k, v in f.cfg.items() if k not in layout}, f.where)
    _, flags, sizes = read_t5(t)
    f.used.update(t.used)
    f.notes.extend(t.notes)
    flags.update(head="lm", head_scale=False)
    if f.bool("add_cross_attention", False):
        raise SymgptError(f"{f.where}: add_cross_attention=true is not modelled for UDOP")
    L = Fields(layout, f.where)
    sizes.update(P_patch=L.int("patch_size", 16), C_img=L.int("num_channels", 3), N_img=0)
    L.int("image_size", 224)
    args, _ = L.get("relative_bias_args", [{"type": "1d"}, {"type": "horizontal"}, {"type": "vertical"}])
    if not isinstance(args, list) or not all(isinstance(a, dict) and a.get("type") in ("1d", "horizontal", "vertical")
                                             and set(a) <= _BIAS_KEYS for a in args):
        raise SymgptError(f"{f.where}: relative_bias_args other than entries of type 1d, horizontal or vertical "
                          "(default bucket counts, no prefix buckets) are not modelled")
    if any(a.get("num_heads", sizes["h"]) != sizes["h"] for a in args):
        raise SymgptError(f"{f.where}: relative_bias_args num_heads must be the model's num_heads")
    flags.update(cell_positions=L.int("max_2d_position_embeddings", 1024), layout_biases=max(len(args) - 1, 0),
                 layout_bias_buckets=32)
    f.used.update(layout)
    f.notes.append("the forward counted is over token ids, without boxes or an image: the patch embeddings, 2D "
                   "cell embeddings and layout relative biases are held, their parameters counted. The cost of an "
                   "image or a layout is not modelled for UDOP")
    return "udop", flags, sizes


READERS = {"udop": Reader(read, ("UdopForConditionalGeneration",))}

PRESETS: tuple = ()
