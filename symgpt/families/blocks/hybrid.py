"""Hybrid language models: Mamba mixers, attention, MLPs and mixtures of experts in one stack of
layers, declared by a layer pattern (transformers' BambaForCausalLM, NemotronHForCausalLM,
GraniteMoeHybridForCausalLM, JambaForCausalLM).

The pattern is data: each layer is a word, the sublayers of that layer in order, one letter each,
every sublayer a pre-norm branch ``x + f(RMSNorm(x))``:

* ``M``: a Mamba mixer (``blocks/mamba.py``: Mamba-1 with ``version`` 1, Mamba-2 with 2);
* ``*``: attention (the shared attention builder, ``blocks/attention.py``);
* ``-``: a dense FFN, ``E``: a mixture of experts (the shared FFN builder, ``blocks/ffn.py``);
* ``P``: attention and a Mamba mixer in parallel on the same normed input, their outputs summed
  (Falcon-H1).

So Bamba's layers are ``M-`` and ``*-``, Jamba's ``M-``, ``ME``, ``*-`` and ``*E``, Nemotron-H's
one sublayer each (its own pattern letters ``M``, ``*``, ``-``, ``E``). Layers of one word are one
stack, counted × the number of layers of that kind (a symbol of its own: ``L_ssm_mlp`` for ``M-``,
``L_attn`` for ``*``, bound to the count flag) (stacks in the order their kind first
a reader finds in the config's pattern, declared as one count flag per kind, ``mamba_mlp_layers``
for ``M-``; stacks in the order of :data:`WORDS`: the order of layers changes no count).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import CANONICAL, FLAG_SYMBOLS, B, E, T, V, d, d_ff, d_ff_expert, d_ff_shared, d_head, h, h_kv, k
from ...graph import roles as R
from ...graph.arch import Builder
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .ffn import FFNSpec, MoE, ffn
from .mamba import mixer

#: sublayer letter -> what it is (stack labels)
SUBLAYERS = {"M": "Mamba", "*": "attention", "-": "MLP", "E": "MoE", "P": "attention ∥ Mamba"}
#: sublayer letter -> the stem of its node names and of its stack's name
STEMS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe", "P": "parallel"}


#: the layer kinds, in the order their stacks are declared: one word each (its sublayers)
WORDS = ("M", "M-", "ME", "*", "*-", "*E", "-", "E", "P-")


def count_flag(word: str) -> str:
    """The flag holding how many layers of kind *word* the pattern has (``mamba_mlp_layers``)."""
    return "_".join(STEMS[c] for c in word) + "_layers"


def count_symbol(word: str) -> sympy.Symbol:
    """The symbol counting the layers of kind *word* (``L_ssm_mlp`` for ``M-``), bound to its
    count flag's value (``symgpt.core.flag_symbols.FLAG_SYMBOLS``)."""
    return CANONICAL[FLAG_SYMBOLS[count_flag(word)]]


def kinds(flags) -> list[tuple[str, int]]:
    """The layer kinds the count flags declare, with their counts (at least one layer)."""
    found = [(w, flags[count_flag(w)]) for w in WORDS if flags.get(count_flag(w))]
    if not found:
        raise SymgptError("a hybrid needs at least one layer (the *_layers flags are all unset)")
    return found


def _label(flags, word: str) -> str:
    mamba = "Mamba-2" if flags["version"] == 2 else "Mamba"
    return " + ".join(SUBLAYERS[c].replace("Mamba", mamba) for c in word) + " layer"


def _ffn(g, flags, x, prefix, moe: bool):
    spec = None
    ff = d_ff
    if moe:
        groups = (flags["n_group"], 2, flags["topk_group"]) if flags["n_group"] else None
        shared = d_ff_shared if flags["shared_ff"] else None
        spec = MoE(E, k, score=flags["router"], normalize=bool(flags["topk_norm"]), groups=groups,
                   shared=flags["shared_expert"], shared_ff=shared)
        if flags["expert_ff"]:
            ff = d_ff_expert
    return ffn(g, x, FFNSpec(d, ff, activation(flags["activation"]), prefix=prefix, bias=bool(flags["mlp_bias"]),
                             gated=bool(flags["gated"]), moe=spec))


def _layer(g, flags, word, x, table, dh, kv):
    for i, c in enumerate(word):
        stem = STEMS[c]
        a = g.op(f"{stem}_norm", ops.RMSNorm(d), x, role=R.MIXER_NORM if c == "M" else
                 R.ATTENTION_NORM if c == "*" else R.FFN_NORM, label="RMSNorm")
        if c == "M":
            o = mixer(g, a, flags)
            role = R.MIXER_RESIDUAL
        elif c in "*P":
            o = attention(g, a, AttentionSpec(d, h, dh=dh, kv_heads=kv, projections=Projections(
                bias=bool(flags["qkv_bias"]), out_bias=bool(flags["attn_out_bias"]))), rotary=table)
            role = R.ATTENTION_RESIDUAL
            if c == "P":
                m = mixer(g, a, flags)
                o = g.op("parallel/sum", ops.Add(), o, m, role=R.PARALLEL_SUM, label="attn_out + mamba_out")
        else:
            o = _ffn(g, flags, a, f"{stem}/", moe=c == "E")
            role = R.FFN_RESIDUAL
        x = g.op(f"{stem}_residual", ops.Add(), x, o, role=role, label=f"X + {SUBLAYERS[c]}")  # (B, T, d)
    return x


def build(flags, bound, name="hybrid"):
    g = Builder(name, declared_roles=True)
    found = kinds(flags)
    if flags["version"] == 2:
        from ...core.symbols import G_ssm, d_inner, h_ssm
        g.require("integer", d_inner / h_ssm, "d_inner must be divisible by h_ssm (head_dim)", id="heads_divide_inner")
        g.require("integer", h_ssm / G_ssm, "h_ssm must be divisible by G_ssm", id="groups_divide_heads")
    attn = any("*" in w or "P" in w for w, _ in found)
    # h_kv and d_head are used when bound (else h heads of d/h), as the generic decoder does
    kv = h_kv if "h_kv" in bound else h
    dh = d_head if "d_head" in bound else d / h
    if attn and kv is h_kv:
        g.require("integer", h / h_kv, "h must be a multiple of h_kv", id="kv_heads_divide_heads")
    if attn and dh is not d_head:
        g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    ids = g.input("input_ids", (B, T), label="input_ids", role=R.TOKENS)
    x = g.op("embed_tokens", ops.Embedding(V, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)      # (B, T, d)
    table = None
    if attn and flags["rotary_pct"]:
        frac = sympy.Rational(flags["rotary_pct"], 100)
        table = g.op("rotary", ops.RotaryTable(dh, frac), "input_ids", label="cos, sin", role=R.ROTARY_TABLE)
    for word, count in found:
        with g.repeat(count_flag(word), count_symbol(word), label=_label(flags, word), carry=x, role=R.STACK):
            x = _layer(g, flags, word, x, table, dh, kv)
    x = g.op("final_norm", ops.RMSNorm(d), x, role=R.FINAL_NORM, label="final norm")
    tie = {"weight": g.param("embed_tokens")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x, tie=tie, label="logits",
                  role=R.HEAD)                                                                  # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=R.LOSS) if flags["loss"] else ""
    return g.build(output=logits, loss=loss, flags=dict(flags))
