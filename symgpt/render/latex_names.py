"""How the parts of a model are named in lecture notes: parameter tensors as math symbols
(``W_{\\mathrm{attn}}``, ``\\gamma_1``), ops as words, breakdown categories as labels.

This is presentation data, keyed by *role* (``symgpt.graph.roles``: what an op is, whatever its family
names it) and falling back to the op kind and the raw path, so a family without an entry still
prints something correct (the path in typewriter type).
"""

from __future__ import annotations

from ..graph import roles as R

#: role -> (description, {local parameter: LaTeX symbol})
TENSORS = {
    R.TOKEN_EMBEDDING: ("token embedding", {"weight": "E"}),
    R.POSITION_EMBEDDING: ("position embedding", {"weight": r"W_{\mathrm{pos}}"}),
    R.ATTENTION_NORM: ("LayerNorm 1", {"weight": r"\gamma_1", "bias": r"\beta_1"}),
    R.QUERY: ("attention query", {"weight": "W_Q", "bias": "b_Q"}),
    R.KEY: ("attention key", {"weight": "W_K", "bias": "b_K"}),
    R.VALUE: ("attention value", {"weight": "W_V", "bias": "b_V"}),
    R.FFN_GATE: ("FFN gate", {"weight": r"W_{\mathrm{gate}}", "bias": r"b_{\mathrm{gate}}"}),
    R.QKV: ("attention Q, K, V (fused)", {"weight": r"W_{\mathrm{attn}}", "bias": r"b_{\mathrm{attn}}"}),
    R.OUT: ("attention output", {"weight": "W_O", "bias": "b_O"}),
    R.FFN_NORM: ("LayerNorm 2", {"weight": r"\gamma_2", "bias": r"\beta_2"}),
    R.FFN_UP: ("FFN expand", {"weight": "W_1", "bias": "b_1"}),
    R.FFN_DOWN: ("FFN contract", {"weight": "W_2", "bias": "b_2"}),
    R.CROSS_NORM: ("LayerNorm (cross-attention)", {"weight": r"\gamma_c", "bias": r"\beta_c"}),
    R.CROSS_QUERY: ("cross-attention query", {"weight": "W^{c}_Q", "bias": "b^{c}_Q"}),
    R.CROSS_KEY: ("cross-attention key", {"weight": "W^{c}_K", "bias": "b^{c}_K"}),
    R.CROSS_VALUE: ("cross-attention value", {"weight": "W^{c}_V", "bias": "b^{c}_V"}),
    R.CROSS_OUT: ("cross-attention output", {"weight": "W^{c}_O", "bias": "b^{c}_O"}),
    R.FINAL_NORM: ("final LayerNorm", {"weight": r"\gamma_f", "bias": r"\beta_f"}),
    R.HEAD: ("LM head", {"weight": r"W_{\mathrm{head}}"}),
    # multi-latent attention (DeepSeek-V2, arXiv 2405.04434, eqs. 9-13): W^{DQ}, W^{UQ}, W^{DKV}, W^{UKV}
    R.QUERY_DOWN: ("query down-projection", {"weight": r"W^{DQ}"}),
    R.QUERY_UP: ("query up-projection", {"weight": r"W^{UQ}"}),
    R.KV_DOWN: ("key-value down-projection (and rotary key)", {"weight": r"W^{DKV}"}),
    R.KV_UP: ("key-value up-projection", {"weight": r"W^{UKV}"}),
    R.QUERY_LATENT_NORM: ("query latent RMSNorm", {"weight": r"\gamma_{cq}"}),
    R.ROUTER: ("MoE router", {"weight": r"W_{\mathrm{router}}", "bias": r"b_{\mathrm{router}}"}),
}

#: op kind -> LaTeX symbol per local parameter name, when the path has no entry above
KINDS = {
    "layernorm": {"weight": r"\gamma", "bias": r"\beta"},
    "rmsnorm": {"weight": r"\gamma"},
    "embedding": {"weight": "E"},
}

#: breakdown categories (the bar): key -> label, in display order
CATEGORIES = {
    "ffn": "feed-forward",
    "token": "token embedding",
    "attention": "attention",
    "position": "position embedding",
    "norms": "layer norms",
    "head": "output head",
}

#: the order of the per-block rows in the breakdown table (as in Raschka's book)
TABLE_ORDER = ("attention", "ffn", "norms")

#: colours of the categories in figures (xcolor names mixed with white)
COLOURS = {
    "ffn": "blue!55", "token": "orange!70", "attention": "teal!55", "position": "red!55",
    "norms": "gray!60", "head": "violet!45",
}


def local_path(path: str, groups) -> str:
    """``blocks/attention/qkv`` -> ``attention/qkv``: a path shown without its stack's name."""
    head = path.split("/")[0]
    return path[len(head) + 1:] if head in groups else path


def _role(arch, path: str) -> str | None:
    return arch.graph.nodes[path].get("role") if path in arch.graph else None


def tensor_name(path: str, local: str, kind: str, arch) -> tuple[str | None, str | None]:
    """(LaTeX symbol or None, description or None) for parameter *local* of the op at *path*,
    by the op's role (then by its kind)."""
    key = _role(arch, path)
    if key in TENSORS:
        desc, syms = TENSORS[key]
        if kind == "rmsnorm":
            desc = desc.replace("LayerNorm", "RMSNorm")
        return syms.get(local), desc
    return KINDS.get(kind, {}).get(local), None


def where(path: str, arch) -> str:
    """Which copies an op of a mixture runs in, said after its name: " (routed experts)" inside the
    routed experts, " (shared expert)" inside a shared expert, "" elsewhere."""
    node = arch.graph.nodes[path] if path in arch.graph else None
    chain = arch.group_chain(node.get("group")) if node is not None else []
    for g in chain:
        if g.role == R.EXPERTS:
            return " (routed experts)"
        if (g.label or "").startswith("shared expert"):
            return " (shared expert)"
    return ""


def category(path: str, arch) -> str:
    """The breakdown category of an op by its role: attention, ffn, norms, token, position,
    head (an op without a role: the first part of its path inside its stack)."""
    role = _role(arch, path)
    part = R.part_of(role)
    if part == "embedding":
        return role.split(".", 1)[1]
    if part == "norm":
        return "norms"
    if part == "residual":
        return role.split(".", 1)[1]
    if part is not None:
        return part
    return local_path(path, arch.groups).split("/")[0]


def category_label(key: str) -> str:
    return CATEGORIES.get(key, key.replace("_", " "))
