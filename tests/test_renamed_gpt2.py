"""GPT-2 declared again with Hugging Face's module names (``wte``, ``h/attn/c_attn``,
``h/mlp/c_fc``, ``ln_f``) and explicit roles gives the same numbers (the seeds': 124,439,808
parameters, 12d² + 13d per block), the same rules and the same LaTeX tables as the built-in
gpt2: no consumer depends on GPT-2's path strings."""

from __future__ import annotations

import re

import pytest
import sympy

import symgpt
from symgpt import ops
from symgpt.graph import roles as R
from symgpt.families.base import Family
from symgpt.graph.arch import Builder
from symgpt.model.model import Model
from symgpt.core.notation import notation
from symgpt.query import by_role, check_library, crossover, per_block, rule, select
from symgpt.documents.latex_doc import fragment
from symgpt.core.symbols import B, L, T, T_max, V, d, h

#: GPT-2's path -> the Hugging Face module name used here (the LaTeX shows paths in \texttt)
RENAMED = {
    "input_ids": "input_ids", "embedding/token": "wte", "embedding/position": "wpe",
    "embedding/add": "embed_sum", "blocks": "h", "norms/attention": "ln_1",
    "attention/qkv": "attn/c_attn", "attention/q": "attn/query", "attention/k": "attn/key",
    "attention/v": "attn/value", "attention/q_heads": "attn/query_heads",
    "attention/k_heads": "attn/key_heads", "attention/v_heads": "attn/value_heads",
    "attention/scores": "attn/qk", "attention/scale": "attn/scaled", "attention/mask": "attn/masked",
    "attention/softmax": "attn/probs", "attention/values": "attn/av", "attention/merge": "attn/merged",
    "attention/proj": "attn/c_proj", "attention/residual": "attn_residual", "norms/ffn": "ln_2",
    "ffn/up": "mlp/c_fc", "ffn/act": "mlp/act", "ffn/down": "mlp/c_proj", "ffn/residual": "mlp_residual",
    "final_norm": "ln_f", "lm_head": "lm_out", "loss": "nll",
}


def build(flags, bound):
    n = RENAMED
    g = Builder("gpt2-hf-names")
    g.require("integer", d / h, "d must be divisible by h")
    g.require("le", T - T_max, "T must not exceed T_max, the length of the learned position table")
    ids = g.input(n["input_ids"], (B, T), label="input ids", role=R.TOKENS)
    tok = g.op(n["embedding/token"], ops.Embedding(V, d), ids, label="tok_emb", role=R.TOKEN_EMBEDDING)
    pos = g.op(n["embedding/position"], ops.PositionEmbedding(T_max, d), ids, label="pos_emb",
               role=R.POSITION_EMBEDDING)
    x = g.op(n["embedding/add"], ops.Add(), tok, pos, label="X0", role=R.EMBEDDING_ADD)
    with g.repeat(n["blocks"], L, label="Transformer block", carry=x, role=R.STACK):
        a = g.op(n["norms/attention"], ops.LayerNorm(d), x, label="LayerNorm_1", role=R.ATTENTION_NORM)
        qkv = g.op(n["attention/qkv"], ops.Linear(d, 3 * d), a, label="QKV", role=R.QKV)
        heads = {}
        for i, (key, role, hrole) in enumerate((("q", R.QUERY, R.QUERY_HEADS), ("k", R.KEY, R.KEY_HEADS),
                                                 ("v", R.VALUE, R.VALUE_HEADS))):
            s = g.op(n[f"attention/{key}"], ops.Slice(i * d, d), qkv, label=key.upper(), role=role)
            heads[key] = g.op(n[f"attention/{key}_heads"], ops.SplitHeads(h, d / h), s,
                              label=f"{key.upper()} heads", role=hrole)
        s = g.op(n["attention/scores"], ops.Matmul("attention_scores", transpose_b=True, causal=True),
                 heads["q"], heads["k"], label="S = Q Kᵀ", role=R.SCORES)
        s = g.op(n["attention/scale"], ops.Scale(1 / sympy.sqrt(d / h)), s, label="S / √d_h", role=R.SCALE)
        s = g.op(n["attention/mask"], ops.CausalMask(), s, label="S + mask", role=R.MASK)
        p = g.op(n["attention/softmax"], ops.Softmax(), s, label="A = softmax(S)", role=R.SOFTMAX)
        z = g.op(n["attention/values"], ops.Matmul("attention_values", causal=True), p, heads["v"],
                 label="Z = A V", role=R.VALUES)
        z = g.op(n["attention/merge"], ops.MergeHeads(), z, label="Z merged", role=R.MERGE)
        o = g.op(n["attention/proj"], ops.Linear(d, d), z, label="attn_out", role=R.OUT)
        x = g.op(n["attention/residual"], ops.Add(), x, o, label="X + attn_out", role=R.ATTENTION_RESIDUAL)
        f = g.op(n["norms/ffn"], ops.LayerNorm(d), x, label="LayerNorm_2", role=R.FFN_NORM)
        u = g.op(n["ffn/up"], ops.Linear(d, 4 * d), f, label="H", role=R.FFN_UP)
        u = g.op(n["ffn/act"], ops.GELU(), u, label="GELU(H)", role=R.FFN_ACT)
        o = g.op(n["ffn/down"], ops.Linear(4 * d, d), u, label="ffn_out", role=R.FFN_DOWN)
        x = g.op(n["ffn/residual"], ops.Add(), x, o, label="X + ffn_out", role=R.FFN_RESIDUAL)
    x = g.op(n["final_norm"], ops.LayerNorm(d), x, label="LayerNorm_final", role=R.FINAL_NORM)
    # the head is found by its role: no 'lm_head' tag, no 'lm_head' path
    tie = {"weight": g.param(n["embedding/token"])} if flags["tied"] else None
    logits = g.op(n["lm_head"], ops.Linear(d, V, bias=False), x, tie=tie, label="logits", role=R.HEAD)
    loss = g.op(n["loss"], ops.CrossEntropy(), logits, label="loss", role=R.LOSS)
    return g.build(output=logits, loss=loss, flags=dict(flags))


FAMILY = Family("gpt2-hf-names", "test: GPT-2 with Hugging Face's module names", {"tied": True},
                ("L", "d", "h", "V", "T_max"), build)
SMALL = {"L": 12, "h": 12, "d": 768, "V": 50257, "T_max": 1024}


def renamed(**sizes) -> Model:
    return Model("gpt2-small", FAMILY, sizes={**SMALL, **sizes})


def _path(p: str) -> str:
    """A gpt2 path as the renamed model names it."""
    if p.startswith("blocks/"):
        return "h/" + RENAMED[p[len("blocks/"):]]
    return RENAMED.get(p, p)


def test_paths_differ_and_roles_agree():
    r, g = renamed().arch, symgpt.load("gpt2-small").arch
    assert not (set(n for n, _ in r.ops()) & {"lm_head", "blocks/ffn/up", "embedding/token"})
    for n, _ in g.ops():
        assert r.role(_path(n)) == g.role(n)


def test_seed_numbers():
    m = renamed()
    assert m.params.value == 124_439_808                       # lecture note 7.3 §4.3
    one = per_block(by_role(m.params, m, [R.STACK]), m)
    assert one.value == 12 * 768**2 + 13 * 768 == 7_087_872   # lecture note 7.3 §4.1: 12d² + 13d
    assert sympy.expand(m.params.expr - (12 * L * d**2 + 13 * L * d + V * d + T_max * d + 2 * d)) == 0
    f = select(m, "flops.forward", roles=[R.STACK], per_block_=True, per="sequence")
    assert sympy.expand(f.expr - (24 * T * d**2 + 4 * T**2 * d)) == 0   # lecture note 7.3 §5 (6.12)
    head = by_role(renamed(B=8, T=1024).quantity("flops.forward", per="batch"), m, [R.HEAD])
    assert head.value == 2 * 8 * 1024 * 50257 * 768            # lecture note 7.3 §5.1: 2BTVd
    assert crossover(select(m, "flops.forward", roles=[R.STACK], per="token"), "T").value == 6 * 768


def test_same_rules_as_gpt2():
    m, g = renamed(), symgpt.load("gpt2-small")
    for regime in ("d", ["d", "V"]):
        assert sympy.expand(rule(m.params, regime).rule - rule(g.params, regime).rule) == 0
    assert sympy.expand(rule(m.params, "d").rule - 12 * L * d**2) == 0            # lesson LM4-T5
    assert sympy.expand(rule(m.params, ["d", "V"]).rule - (V * d + 12 * L * d**2)) == 0  # lecture note 7.3 §7.2


def _as_gpt2(tex: str) -> str:
    """The renamed model's LaTeX with its paths written as gpt2's (longest names first)."""
    tex = tex.replace(r"\allowbreak{}", "")
    back = {}
    for p in RENAMED:
        if p != "blocks":  # 'h' alone is also the symbol of the heads
            back[_path(p)] = p
        back[_path("blocks/" + p)] = "blocks/" + p
    for new in sorted(back, key=len, reverse=True):
        tex = re.sub(r"(?<![\w/])" + re.escape(new.replace("_", r"\_")) + r"(?![\w/])",
                     back[new].replace("_", r"\_"), tex)
    # a table's label is made from its stack's name
    return tex.replace("gpt2-hf-names", "gpt2").replace("gpt2small-h}", "gpt2small-blocks}")


@pytest.mark.parametrize("what", ["blocks", "embeddings", "total", "rule", "breakdown", "flops", "memory",
                                  "shapes", "steps", "selftest"])
def test_same_latex_tables_as_gpt2(what):
    nota = notation(None)
    mine = fragment(renamed(B=8, T=1024), what, notation=nota)
    theirs = fragment(symgpt.load("gpt2-small", B=8, T=1024), what, notation=nota)
    assert _as_gpt2(mine) == theirs.replace(r"\allowbreak{}", "")


def test_published_formulas_select_by_role():
    # every library formula that picks roles (the stack, the head) holds for gpt2 as documented
    rows = [c for c in check_library() if c.formula.roles]
    assert rows and all(c.as_expected is not False for c in rows)
