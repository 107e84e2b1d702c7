"""How the parts of a model are named in lecture notes: parameter tensors as math symbols
(``W_{\\mathrm{attn}}``, ``\\gamma_1``), op paths as words, breakdown categories as labels.

This is presentation data, keyed by op path (the part after the repeated group) and falling
back to the op kind and the raw path, so a family without an entry still prints something
correct (the path in typewriter type).
"""

from __future__ import annotations

#: op path (without the group prefix) -> (description, {local parameter: LaTeX symbol})
TENSORS = {
    "embedding/token": ("token embedding", {"weight": "E"}),
    "embedding/position": ("position embedding", {"weight": r"W_{\mathrm{pos}}"}),
    "norms/attention": ("LayerNorm 1", {"weight": r"\gamma_1", "bias": r"\beta_1"}),
    "attention/q": ("attention query", {"weight": "W_Q", "bias": "b_Q"}),
    "attention/k": ("attention key", {"weight": "W_K", "bias": "b_K"}),
    "attention/v": ("attention value", {"weight": "W_V", "bias": "b_V"}),
    "ffn/gate": ("FFN gate", {"weight": r"W_{\mathrm{gate}}", "bias": r"b_{\mathrm{gate}}"}),
    "attention/qkv": ("attention Q, K, V (fused)", {"weight": r"W_{\mathrm{attn}}", "bias": r"b_{\mathrm{attn}}"}),
    "attention/proj": ("attention output", {"weight": "W_O", "bias": "b_O"}),
    "norms/ffn": ("LayerNorm 2", {"weight": r"\gamma_2", "bias": r"\beta_2"}),
    "ffn/up": ("FFN expand", {"weight": "W_1", "bias": "b_1"}),
    "ffn/down": ("FFN contract", {"weight": "W_2", "bias": "b_2"}),
    "final_norm": ("final LayerNorm", {"weight": r"\gamma_f", "bias": r"\beta_f"}),
    "lm_head": ("LM head", {"weight": r"W_{\mathrm{head}}"}),
}

#: op kind -> LaTeX symbol per local parameter name, when the path has no entry above
KINDS = {
    "layernorm": {"weight": r"\gamma", "bias": r"\beta"},
    "rmsnorm": {"weight": r"\gamma"},
    "embedding": {"weight": "E"},
}

#: breakdown categories (seed 002's bar): key -> label, in display order
CATEGORIES = {
    "ffn": "feed-forward",
    "token": "token embedding",
    "attention": "attention",
    "position": "position embedding",
    "norms": "layer norms",
    "head": "output head",
}

#: the order of the per-block rows in the breakdown table (seed 002)
TABLE_ORDER = ("attention", "ffn", "norms")

#: colours of the categories in figures (xcolor names mixed with white)
COLOURS = {
    "ffn": "blue!55", "token": "orange!70", "attention": "teal!55", "position": "red!55",
    "norms": "gray!60", "head": "violet!45",
}


def local_path(path: str, groups) -> str:
    """``blocks/attention/qkv`` -> ``attention/qkv`` (the group prefix dropped)."""
    head = path.split("/")[0]
    return path[len(head) + 1:] if head in groups else path


def tensor_name(path: str, local: str, kind: str, groups) -> tuple[str | None, str | None]:
    """(LaTeX symbol or None, description or None) for a parameter tensor."""
    key = local_path(path, groups)
    if key in TENSORS:
        desc, syms = TENSORS[key]
        if kind == "rmsnorm":
            desc = desc.replace("LayerNorm", "RMSNorm")
        return syms.get(local), desc
    return KINDS.get(kind, {}).get(local), None


def category(path: str, groups) -> str:
    """The breakdown category of an op path: attention, ffn, norms, token, position, head."""
    parts = path.split("/")
    if parts[0] in groups:
        parts = parts[1:]
    if parts[0] == "embedding" and len(parts) > 1:
        return parts[1]
    if parts[0] in ("final_norm", "norms") or parts[0].endswith("norm"):
        return "norms"
    if parts[0] == "lm_head":
        return "head"
    return parts[0]


def category_label(key: str) -> str:
    return CATEGORIES.get(key, key.replace("_", " "))
