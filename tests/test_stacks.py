"""Consumers ask for roles, never for GPT-2's paths: a model with two stacks of layers (an encoder
over S source tokens and a decoder over T target tokens, with cross-attention), named as its
source names its modules, goes through every derivation, query, LaTeX fragment and the diagram;
its counts are checked against hand arithmetic written here."""

from __future__ import annotations

import sympy
import pytest

from symgpt import ops
from symgpt.graph import roles as R
from symgpt.families.base import Family
from symgpt.graph.arch import Builder
from symgpt.model.model import Model
from symgpt.core.notation import notation
from symgpt.query import by_role, crossover, dominance, per_block, rule, select
from symgpt.documents.diagrams import diagram
from symgpt.documents.latex_doc import fragment
from symgpt.core.symbols import B, L, T, V, d, d_ff, h

#: the source length: a stack's own sequence length (not a canonical symbol: it stays free)
S = sympy.Symbol("S", integer=True, positive=True)
N_ENC = 2  # encoder layers (a number; L counts the decoder's)


def _attention(g, x, kv, prefix, roles, causal):
    """q from *x*, k and v from *kv*; roles: (q, k, v, k_heads, v_heads, scores, values, out)."""
    rq, rk, rv, rkh, rvh, rs, rvals, rout = roles
    q = g.op(f"{prefix}/q", ops.Linear(d, d), x, role=rq)
    k = g.op(f"{prefix}/k", ops.Linear(d, d), kv, role=rk)
    v = g.op(f"{prefix}/v", ops.Linear(d, d), kv, role=rv)
    qh = g.op(f"{prefix}/q_heads", ops.SplitHeads(h, d / h), q,
              role=R.QUERY_HEADS if rq == R.QUERY else None)
    kh = g.op(f"{prefix}/k_heads", ops.SplitHeads(h, d / h), k, role=rkh)
    vh = g.op(f"{prefix}/v_heads", ops.SplitHeads(h, d / h), v, role=rvh)
    s = g.op(f"{prefix}/scores", ops.Matmul("attention_scores", transpose_b=True, causal=causal), qh, kh, role=rs)
    s = g.op(f"{prefix}/scale", ops.Scale(1 / sympy.sqrt(d / h)), s, role=R.SCALE if rq == R.QUERY else None)
    if causal:
        s = g.op(f"{prefix}/mask", ops.CausalMask(), s, role=R.MASK)
    p = g.op(f"{prefix}/softmax", ops.Softmax(), s, role=R.SOFTMAX if rq == R.QUERY else None)
    z = g.op(f"{prefix}/values", ops.Matmul("attention_values", causal=causal), p, vh, role=rvals)
    z = g.op(f"{prefix}/merge", ops.MergeHeads(), z, role=R.MERGE if rq == R.QUERY else None)
    return g.op(f"{prefix}/o", ops.Linear(d, d), z, role=rout)


SELF = (R.QUERY, R.KEY, R.VALUE, R.KEY_HEADS, R.VALUE_HEADS, R.SCORES, R.VALUES, R.OUT)
CROSS = (R.CROSS_QUERY, R.CROSS_KEY, R.CROSS_VALUE, R.CROSS_KEY_HEADS, R.CROSS_VALUE_HEADS,
         R.CROSS_SCORES, R.CROSS_VALUES, R.CROSS_OUT)


def _mlp(g, x):
    f = g.op("ln_2", ops.LayerNorm(d), x, role=R.FFN_NORM)
    u = g.op("mlp/c_fc", ops.Linear(d, d_ff), f, role=R.FFN_UP)
    u = g.op("mlp/act", ops.GELU(), u, role=R.FFN_ACT)
    o = g.op("mlp/c_proj", ops.Linear(d_ff, d), u, role=R.FFN_DOWN)
    return g.op("mlp/residual", ops.Add(), x, o, role=R.FFN_RESIDUAL)


def build(flags, bound):
    g = Builder("encdec")
    src = g.input("src_ids", (B, S), role=R.TOKENS, label="source ids")
    tgt = g.input("tgt_ids", (B, T), role=R.TOKENS, label="target ids")
    e = g.op("shared", ops.Embedding(V, d), src, role=R.TOKEN_EMBEDDING, label="embed source")
    with g.repeat("encoder/block", N_ENC, role=R.STACK, length=S, carry=e, label="Encoder layer"):
        a = g.op("ln_1", ops.LayerNorm(d), e, role=R.ATTENTION_NORM)
        o = _attention(g, a, a, "attn", SELF, causal=False)
        e = g.op("attn/residual", ops.Add(), e, o, role=R.ATTENTION_RESIDUAL)
        e = _mlp(g, e)
    enc = g.op("encoder/ln_f", ops.LayerNorm(d), e, role=R.FINAL_NORM, label="encoder final norm")
    x = g.op("decoder/embed", ops.Embedding(V, d), tgt, tie={"weight": g.param("shared")},
             role=R.TOKEN_EMBEDDING, label="embed target")
    with g.repeat("decoder/block", L, role=R.STACK, length=T, carry=x, label="Decoder layer"):
        a = g.op("ln_1", ops.LayerNorm(d), x, role=R.ATTENTION_NORM)
        o = _attention(g, a, a, "attn", SELF, causal=True)
        x = g.op("attn/residual", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL)
        c = g.op("ln_cross", ops.LayerNorm(d), x, role=R.CROSS_NORM)
        o = _attention(g, c, enc, "cross", CROSS, causal=False)
        x = g.op("cross/residual", ops.Add(), x, o, role=R.CROSS_RESIDUAL)
        x = _mlp(g, x)
    x = g.op("decoder/ln_f", ops.LayerNorm(d), x, role=R.FINAL_NORM, label="decoder final norm")
    logits = g.op("out", ops.Linear(d, V, bias=False), x, role=R.HEAD, label="logits")  # tag: dense
    loss = g.op("nll", ops.CrossEntropy(), logits, role=R.LOSS)
    return g.build(output=logits, loss=loss, flags=dict(flags))


FAMILY = Family("encdec", "test: encoder-decoder, two stacks, source-style paths", {"dropout": False},
                ("L", "d", "h", "V", "d_ff"), build)
SIZES = {"L": 3, "d": 8, "h": 2, "V": 11, "d_ff": 32}


def model(**sizes) -> Model:
    return Model("encdec-tiny", FAMILY, sizes={**SIZES, **sizes})


# --- hand arithmetic ------------------------------------------------------------------------
# encoder layer: 2 LayerNorms (2d each), Q, K, V, O (d² + d each), c_fc (d·d_ff + d_ff),
#   c_proj (d_ff·d + d)                      -> 4d² + 2·d·d_ff + 9d + d_ff
# decoder layer: 3 LayerNorms, self and cross attention (8d² + 8d), the MLP
#                                            -> 8d² + 2·d·d_ff + 15d + d_ff
# outside: the shared embedding V·d (the decoder's is tied to it), two final norms (2d each),
#   the untied head d·V
ENC_LAYER = 4 * d**2 + 2 * d * d_ff + 9 * d + d_ff
DEC_LAYER = 8 * d**2 + 2 * d * d_ff + 15 * d + d_ff
PARAMS = V * d + N_ENC * ENC_LAYER + 2 * d + L * DEC_LAYER + 2 * d + d * V
# d=8, d_ff=32, V=11, L=3:
#   ENC_LAYER = 256 + 512 + 72 + 32 = 872; DEC_LAYER = 512 + 512 + 120 + 32 = 1176
#   88 + 2·872 + 16 + 3·1176 + 16 + 88 = 5480
PARAMS_VALUE = 5480

# forward FLOPs per batch, default convention (2 per multiply-add, matmuls only, full T×T):
#   encoder layer over S: Q, K, V, O 8BSd², QKᵀ and AV 2·2BS²d, MLP 4BSd·d_ff
#   decoder layer over T: self 8BTd² + 4BT²d; cross: Q and O 4BTd², K and V of the S encoder
#   outputs 4BSd², QKᵀ and AV 4BTSd; MLP 4BTd·d_ff
#   head 2BTdV
ENC_FLOPS = 8 * B * S * d**2 + 4 * B * S**2 * d + 4 * B * S * d * d_ff
DEC_FLOPS = 12 * B * T * d**2 + 4 * B * T**2 * d + 4 * B * S * d**2 + 4 * B * T * S * d + 4 * B * T * d * d_ff
FORWARD = N_ENC * ENC_FLOPS + L * DEC_FLOPS + 2 * B * T * d * V


def test_two_stacks_by_role():
    arch = model().arch
    assert [(g.name, g.repeat, g.length) for g in arch.stacks()] == \
        [("encoder/block", N_ENC, S), ("decoder/block", L, T)]
    assert arch.find(R.FFN_UP) == ["encoder/block/mlp/c_fc", "decoder/block/mlp/c_fc"]
    assert arch.find(R.CROSS_KEY_HEADS, stack="decoder/block") == ["decoder/block/cross/k_heads"]
    assert arch.first(R.HEAD) == "out"


def test_params_by_hand():
    m = model()
    assert sympy.expand(m.params.expr - PARAMS) == 0
    assert m.params.value == PARAMS_VALUE
    enc = per_block(by_role(m.params, m, ["encoder/block"]), m)
    dec = per_block(by_role(m.params, m, ["decoder/block"]), m)
    assert sympy.expand(enc.expr - ENC_LAYER) == 0 and enc.value == 872
    assert sympy.expand(dec.expr - DEC_LAYER) == 0 and dec.value == 1176
    # both stacks at once cannot be divided by one layer count
    with pytest.raises(Exception, match="one stack"):
        select(m, "params", roles=[R.STACK], per_block_=True)


def test_flops_by_hand():
    m = model()
    fwd = m.quantity("flops.forward", per="batch")
    assert sympy.expand(fwd.expr - FORWARD) == 0
    assert sympy.expand(by_role(fwd, m, [R.HEAD]).expr - 2 * B * T * d * V) == 0
    # the head is found by role, not by an 'lm_head' tag or path: a convention can leave it out
    no_head = m.quantity("flops.forward", per="batch", lm_head=False)
    assert sympy.expand(no_head.expr - (FORWARD - 2 * B * T * d * V)) == 0
    assert m.quantity("flops.train").expr != 0
    assert any("decoder/block/" in n and " L " in n for n in fwd.notes)
    assert any("encoder/block/" in n and f" {N_ENC} " in n for n in fwd.notes)


def test_memory_runs_and_kv_cache_by_hand():
    m = model(B=1, T=4)
    for name in ("memory.weights", "memory.activations", "memory.total"):
        assert m.quantity(name, precision="bf16").expr != 0
    # K and V a generating decoder keeps: decoder self-attention L × 2·T·d and cross-attention
    # L × 2·S·d elements, 2 bytes each (bf16); the bidirectional encoder caches nothing (as
    # transformers' EncoderDecoderCache: tests/test_encdec_memory.py)
    kv = m.quantity("memory.kv_cache", precision="bf16")
    expected = 2 * (L * 2 * B * T * d + L * 2 * B * S * d)
    assert sympy.expand(kv.expr - expected) == 0


def test_queries():
    m = model()
    r = rule(m.params, "d")
    assert sympy.expand(r.rule - (8 * d**2 + 8 * L * d**2)) == 0   # 2·4d² + L·8d²
    dm = dominance(m.quantity("flops.forward", per="batch"), "T")
    assert sympy.expand(dm.dominant - 4 * L * B * T**2 * d) == 0
    # one decoder layer per sequence, as T grows: 4T²d against 12Td² + 4Sd² + 4TSd + 4Td·d_ff
    one = select(m, "flops.forward", roles=["decoder/block"], per_block_=True, per="sequence")
    c = crossover(one, "T")
    assert c.solutions
    for t in c.solutions:
        assert sympy.simplify(4 * t**2 * d - (12 * t * d**2 + 4 * S * d**2 + 4 * t * S * d + 4 * t * d * d_ff)) == 0
    # one encoder layer as d grows: 8Sd² against 4S²d + 4Sd·d_ff -> d = (S + d_ff) / 2
    enc = select(m, "flops.forward", roles=["encoder/block"], per_block_=True, per="sequence")
    assert sympy.expand(crossover(enc, "d").solution - (S + d_ff) / 2) == 0


@pytest.mark.parametrize("what", ["shapes", "blocks", "embeddings", "total", "rule", "breakdown",
                                  "flops", "memory", "steps", "selftest"])
def test_latex_fragments(what):
    tex = fragment(model(B=1, T=4), what, notation=notation(None))
    assert tex.strip()
    if what == "blocks":  # one table per stack, each with its own count and per-layer total
        assert "one encoder layer" in tex and "one decoder layer" in tex
        assert r"\mathbf{872}" in tex and r"\mathbf{1{,}176}" in tex
        assert "W^{c}_K" in tex  # the cross-attention's tensors are named by their roles


def test_diagram():
    dot = diagram(model(B=1, T=4)).dot
    assert "Encoder layer" in dot and "Decoder layer" in dot and "cross/k_heads" in dot


def test_selection_by_role_in_a_mixture():
    import symgpt
    from symgpt.core.errors import SymgptError

    m = symgpt.load("mixtral-8x7b")
    # 32 layers × 8 experts × 3 matrices of 4096 × 14336; the router: 32 × 4096 × 8
    assert by_role(m.params, m, [R.EXPERTS]).value == 32 * 8 * 3 * 4096 * 14336 == 45_097_156_608
    assert by_role(m.params, m, [R.ROUTER]).value == 32 * 4096 * 8
    with pytest.raises(SymgptError, match="unknown role"):
        by_role(m.params, m, ["attention.qq"])
    with pytest.raises(SymgptError, match="no entry with role 'embedding.position'"):
        by_role(m.params, m, [R.POSITION_EMBEDDING])   # rotary: no position table


def test_one_stack_must_be_picked():
    from symgpt.core.errors import SymgptError
    from symgpt.query import only_stack

    m = model()
    with pytest.raises(SymgptError, match="2 stacks of layers"):
        only_stack(m.params, m)
    dec = only_stack(by_role(m.params, m, [R.CROSS_KEY]), m)
    assert sympy.expand(dec.expr - L * (d**2 + d)) == 0   # W_K and b_K of the cross-attention


def test_whole_document_compiles(tmp_path):
    from helpers import pdf_words
    from symgpt.documents.latex_doc import document

    tex = tmp_path / "encdec.tex"
    tex.write_text(document(model(B=1, T=4), ["all", "steps"]))
    words = pdf_words(tex)
    assert "Cross-Attention to the Encoder Output" in words
    assert "5,480" in words   # the parameter count above, by hand
