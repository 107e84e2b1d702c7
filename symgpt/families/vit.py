"""The Vision Transformer (Dosovitskiy et al. 2021): Conv2d patches, a class token, learned
positions and a pre-LN encoder, then the head the ``head`` flag names (``blocks/vit.py`` builds
it)."""

from __future__ import annotations

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Family, Preset
from .fields import Fields, Reader

FLAGS = {
    "head": "classifier",   # classifier | pooler | none
    "qkv_bias": True,
    "activation": "gelu",
    "dropout": False,
}
CHOICES = {"head": ("classifier", "pooler", "none"), "activation": ("gelu", "gelu_tanh", "relu", "silu")}
FLAG_HELP = {
    "head": "classifier (class token -> N_cls logits), pooler (ViTModel's dense + tanh) or none",
    "qkv_bias": "the query, key and value projections have biases",
    "activation": "the FFN's activation",
    "dropout": "dropout layers present (masks saved for backward)",
}

FAMILIES = (Family(
    name="vit",
    description="Vision Transformer: Conv2d patches, class token, learned positions, pre-LN encoder",
    flags=FLAGS, sizes=("L", "d", "h", "S_img", "P_patch", "C_img"), optional=("d_ff", "N_cls"),
    build=Ref("symgpt.families.blocks.vit", "build"), flag_help=FLAG_HELP, choices=CHOICES),)

#: the transformers class -> the head counted (the first is the default)
HEADS = {"ViTForImageClassification": "classifier", "ViTModel": "pooler"}


def read(f: Fields):
    """transformers' ViTConfig."""
    sizes = {"d": f.int("hidden_size", 768), "L": f.int("num_hidden_layers", 12),
             "h": f.int("num_attention_heads", 12), "d_ff": f.int("intermediate_size", 3072),
             "S_img": f.int("image_size", 224), "P_patch": f.int("patch_size", 16), "C_img": f.int("num_channels", 3)}
    head = HEADS.get(f.architecture, "classifier")
    if head == "classifier":
        labels = f.cfg.get("id2label")
        f.used.update({"id2label", "label2id"})
        if isinstance(labels, dict) and labels:
            sizes["N_cls"] = len(labels)
        else:
            sizes["N_cls"] = f.int("num_labels", 2)
    pooled = f.int("pooler_output_size", None, optional=True)
    if pooled not in (None, sizes["d"]):
        raise SymgptError(f"{f.where}: a pooler of width {pooled} != hidden_size is not supported")
    f.str("pooler_act", "tanh", optional=True)
    f.used.update({"encoder_stride", "hidden_dropout_prob", "attention_probs_dropout_prob", "num_labels"})
    flags = {"head": head, "qkv_bias": f.bool("qkv_bias", True), "activation": f.activation("hidden_act", "gelu")}
    return "vit", flags, sizes


READERS = {"vit": Reader(read, tuple(HEADS))}

PRESETS = (
    Preset("vit-base", "vit",
           {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "S_img": 224, "P_patch": 16, "C_img": 3, "N_cls": 1000},
           flags={"head": "classifier"},
           source="Dosovitskiy et al. 2021 (ViT), Table 1 (ViT-Base, 86M); google/vit-base-patch16-224 "
                  "its config.json on the Hugging Face Hub",
           note="224 x 224 images in 16 x 16 patches: T = (224/16)^2 + 1 = 197; ImageNet's 1,000 classes"),
)
