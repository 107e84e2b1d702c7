"""Checkpoint tensor names -> the op graph's parameters, per family.

A checkpoint names its tensors after the transformers modules that own them
(``model.layers.0.self_attn.q_proj.weight``); the op graph names parameters by role
(``symgpt.graph.roles``: ``attention.q``) and local name (``weight``, ``bias``). Each family's
table below maps a module path (layer and expert indices as ``{i}``) to ``(stack, role)``; the
tensor's last component is the local name. The tables follow transformers' modeling files
(``LlamaDecoderLayer``, ``Gemma2DecoderLayer``, ``Phi3Attention``, ``MixtralSparseMoeBlock`` as the
published checkpoints name it, ``GPT2Block``, ``GPTNeoXLayer``, ``OPTDecoderLayer``,
``T5Block``). A tensor no rule maps is reported as such, never guessed at.

``TIED`` names stored copies of a tied parameter (T5's per-stack ``embed_tokens`` are the
``shared`` table); ``BUFFERS`` names non-parameter tensors older checkpoints hold (GPT-2's causal
mask, rotary ``inv_freq``): both are listed, not counted.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..core.errors import SymgptError


class Slot(NamedTuple):
    """One kind of parameter: its stack (``encoder``/``decoder`` for encoder--decoders, else
    empty), its role and its local name."""

    stack: str
    role: str
    local: str

    def __str__(self) -> str:
        return " ".join(p for p in (self.stack, self.role, self.local) if p)


_I = r"\d+"

_LLAMA_ATTENTION = {
    "self_attn.q_proj": "attention.q", "self_attn.k_proj": "attention.k", "self_attn.v_proj": "attention.v",
    "self_attn.o_proj": "attention.out", "self_attn.qkv_proj": "attention.qkv",
    "self_attn.q_norm": "norm.q", "self_attn.k_norm": "norm.k",
}
_LLAMA_MLP = {"mlp.gate_proj": "ffn.gate", "mlp.up_proj": "ffn.up", "mlp.down_proj": "ffn.down",
              "mlp.gate_up_proj": "ffn.gate_up"}


def _llama_like(layer_norms: dict[str, str], extra: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(module pattern, role) of the LLaMA-style decoders (``model.`` prefix optional)."""
    rules = [(r"embed_tokens", "embedding.token"), (r"norm", "norm.final")]
    for mod, role in {**layer_norms, **_LLAMA_ATTENTION, **_LLAMA_MLP, **(extra or {})}.items():
        rules.append((rf"layers\.{_I}\.{re.escape(mod)}".replace(r"\{i\}", _I), role))
    return [(rf"(?:model\.)?{p}", r) for p, r in rules] + [(r"lm_head", "head")]


_LLAMA_NORMS = {"input_layernorm": "norm.attention", "post_attention_layernorm": "norm.ffn"}
_GEMMA2_NORMS = {"input_layernorm": "norm.attention", "post_attention_layernorm": "norm.post_attention",
                 "pre_feedforward_layernorm": "norm.ffn", "post_feedforward_layernorm": "norm.post_ffn"}
_MIXTRAL = {"block_sparse_moe.gate": "ffn.router", "block_sparse_moe.experts.{i}.w1": "ffn.gate",
            "block_sparse_moe.experts.{i}.w3": "ffn.up", "block_sparse_moe.experts.{i}.w2": "ffn.down"}

_GPT2 = [(r"(?:transformer\.)?wte", "embedding.token"), (r"(?:transformer\.)?wpe", "embedding.position"),
         (rf"(?:transformer\.)?h\.{_I}\.ln_1", "norm.attention"),
         (rf"(?:transformer\.)?h\.{_I}\.attn\.c_attn", "attention.qkv"),
         (rf"(?:transformer\.)?h\.{_I}\.attn\.c_proj", "attention.out"),
         (rf"(?:transformer\.)?h\.{_I}\.ln_2", "norm.ffn"),
         (rf"(?:transformer\.)?h\.{_I}\.mlp\.c_fc", "ffn.up"),
         (rf"(?:transformer\.)?h\.{_I}\.mlp\.c_proj", "ffn.down"),
         (r"(?:transformer\.)?ln_f", "norm.final"), (r"lm_head", "head")]

_NEOX = [(r"(?:gpt_neox\.)?embed_in", "embedding.token"),
         (rf"(?:gpt_neox\.)?layers\.{_I}\.input_layernorm", "norm.attention"),
         (rf"(?:gpt_neox\.)?layers\.{_I}\.post_attention_layernorm", "norm.ffn"),
         (rf"(?:gpt_neox\.)?layers\.{_I}\.attention\.query_key_value", "attention.qkv"),
         (rf"(?:gpt_neox\.)?layers\.{_I}\.attention\.dense", "attention.out"),
         (rf"(?:gpt_neox\.)?layers\.{_I}\.mlp\.dense_h_to_4h", "ffn.up"),
         (rf"(?:gpt_neox\.)?layers\.{_I}\.mlp\.dense_4h_to_h", "ffn.down"),
         (r"(?:gpt_neox\.)?final_layer_norm", "norm.final"), (r"embed_out", "head")]

_OPT_P = r"(?:model\.)?(?:decoder\.)?"
_OPT = [(rf"{_OPT_P}embed_tokens", "embedding.token"), (rf"{_OPT_P}embed_positions", "embedding.position"),
        (rf"{_OPT_P}project_in", "embedding.project_in"), (rf"{_OPT_P}project_out", "embedding.project_out"),
        (rf"{_OPT_P}layers\.{_I}\.self_attn\.q_proj", "attention.q"),
        (rf"{_OPT_P}layers\.{_I}\.self_attn\.k_proj", "attention.k"),
        (rf"{_OPT_P}layers\.{_I}\.self_attn\.v_proj", "attention.v"),
        (rf"{_OPT_P}layers\.{_I}\.self_attn\.out_proj", "attention.out"),
        (rf"{_OPT_P}layers\.{_I}\.self_attn_layer_norm", "norm.attention"),
        (rf"{_OPT_P}layers\.{_I}\.fc1", "ffn.up"), (rf"{_OPT_P}layers\.{_I}\.fc2", "ffn.down"),
        (rf"{_OPT_P}layers\.{_I}\.final_layer_norm", "norm.ffn"),
        (rf"{_OPT_P}final_layer_norm", "norm.final"), (r"lm_head", "head")]


def _t5() -> list[tuple[str, str, str]]:
    rules = [("shared", "", "embedding.token"), ("lm_head", "", "head")]
    attn = {"q": "q", "k": "k", "v": "v", "o": "out"}
    ffn = {"wi": "ffn.up", "wi_0": "ffn.gate", "wi_1": "ffn.up", "wo": "ffn.down"}
    for stack, ffn_layer in (("encoder", 1), ("decoder", 2)):
        b = rf"{stack}\.block\.{_I}\.layer\."
        rules.append((rf"{stack}\.block\.0\.layer\.0\.SelfAttention\.relative_attention_bias", stack,
                      "embedding.relative_bias"))
        rules.append((rf"{b}0\.layer_norm", stack, "norm.attention"))
        rules += [(rf"{b}0\.SelfAttention\.{m}", stack, f"attention.{r}") for m, r in attn.items()]
        rules.append((rf"{b}{ffn_layer}\.layer_norm", stack, "norm.ffn"))
        rules += [(rf"{b}{ffn_layer}\.DenseReluDense\.{m}", stack, r) for m, r in ffn.items()]
        rules.append((rf"{stack}\.final_layer_norm", stack, "norm.final"))
    rules.append((rf"decoder\.block\.{_I}\.layer\.1\.layer_norm", "decoder", "norm.cross_attention"))
    rules += [(rf"decoder\.block\.{_I}\.layer\.1\.EncDecAttention\.{m}", "decoder", f"cross_attention.{r}")
              for m, r in attn.items()]
    return rules


def _plain(rules):
    return [(p, "", r) for p, r in rules]


#: family -> [(module pattern, stack, role)]
TABLES = {
    "llama": _plain(_llama_like(_LLAMA_NORMS)),
    "mistral": _plain(_llama_like(_LLAMA_NORMS)),
    "qwen2": _plain(_llama_like(_LLAMA_NORMS)),
    "qwen3": _plain(_llama_like(_LLAMA_NORMS)),
    "gemma": _plain(_llama_like(_LLAMA_NORMS)),
    "gemma2": _plain(_llama_like(_GEMMA2_NORMS)),
    "phi3": _plain(_llama_like(_LLAMA_NORMS)),
    "mixtral": _plain(_llama_like(_LLAMA_NORMS, _MIXTRAL)),
    "gpt2": _plain(_GPT2),
    "gpt_neox": _plain(_NEOX),
    "opt": _plain(_OPT),
    "t5": _t5(),
}

#: families whose checkpoints store linear weights as (in, out) (GPT-2's Conv1D); the others
#: store nn.Linear's (out, in), the transpose of the graph's (in, out)
IN_OUT = frozenset({"gpt2"})

#: family -> patterns of stored copies of a tied parameter: (pattern, the parameter's slot)
TIED = {"t5": [(r"(?:encoder|decoder)\.embed_tokens\.weight", Slot("", "embedding.token", "weight"))]}

#: patterns of buffers (not parameters) some checkpoints hold, any family
BUFFERS = [rf"(?:transformer\.)?h\.{_I}\.attn\.(?:masked_)?bias",
           rf"(?:gpt_neox\.)?layers\.{_I}\.attention\.(?:masked_)?bias",
           r".*\.rotary_emb\.inv_freq"]


def _compiled(family: str) -> list[tuple[re.Pattern, str, str]]:
    return [(re.compile(rf"{p}\.(weight|bias)"), stack, role) for p, stack, role in TABLES[family]]


def families() -> list[str]:
    return sorted(TABLES)


class Mapper:
    """Classifies the tensor names of one family's checkpoint."""

    def __init__(self, family: str):
        if family not in TABLES:
            raise SymgptError(f"verify maps the tensor names of {', '.join(families())}; "
                              f"the {family} family's are not mapped yet")
        self.family = family
        self.rules = _compiled(family)
        self.tied = [(re.compile(p), slot) for p, slot in TIED.get(family, [])]
        self.buffers = [re.compile(p) for p in BUFFERS]

    def classify(self, name: str) -> tuple[str, Slot | None]:
        """("param", slot), ("tied", the owner's slot), ("buffer", None) or ("unmapped", None)."""
        for pat, slot in self.tied:
            if pat.fullmatch(name):
                return "tied", slot
        for pat in self.buffers:
            if pat.fullmatch(name):
                return "buffer", None
        for pat, stack, role in self.rules:
            m = pat.fullmatch(name)
            if m:
                return "param", Slot(stack, role, m.group(1))
        return "unmapped", None


def pattern(name: str) -> str:
    """*name* with its layer and expert indices shown as ``*`` (``model.layers.*.mlp.up_proj.weight``)."""
    return re.sub(r"(?<=\.)\d+(?=\.)", "*", name)


def patterns(names) -> list[str]:
    """The names, each group sharing a :func:`pattern` shown once, with ``*`` only where its
    indices vary (``encoder.block.*.layer.0.layer_norm.weight``), in first-seen order."""
    groups: dict[str, list[list[str]]] = {}
    for n in names:
        groups.setdefault(pattern(n), []).append(n.split("."))
    out = []
    for parts in groups.values():
        out.append(".".join(p[0] if all(q[i] == p[0] for q in parts) else "*"
                            for i, p in enumerate(zip(*parts))))
    return out
