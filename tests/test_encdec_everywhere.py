"""The encoder, encoder--decoder and vision families everywhere: counts whose breakdowns sum to
their totals, the shape trace (two sequence lengths), the Graphviz diagram (encoder and decoder
as two clusters, cross-attention edges from the encoder's output into the decoder), LaTeX per
stack, the queries with two growing lengths (rule, dominance, crossover --as T_enc), the
scaling table mixing families, and the CLI commands -- each checked against facts a reader can
verify by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sympy

import symgpt
from symgpt.graph import roles
from symgpt.cli import main
from symgpt.query import compare, crossover, dominance, rule
from symgpt.documents.diagrams import dot_text
from symgpt.documents.latex_doc import fragment, label_key
from symgpt.render.latex_numbers import tex_int
from symgpt.core.symbols import T_dec, T_enc

B_, T_, TE, TD = 2, 8, 8, 5
ZOO = Path(__file__).parent / "configs" / "zoo"
#: family -> (preset, lengths bound on load)
CASES = {
    "bert": ("bert-base", dict(T=T_)),
    "roberta": ("roberta-base", dict(T=T_)),
    "distilbert": ("distilbert-base", dict(T=T_)),
    "t5": ("t5-small", dict(T_enc=TE, T_dec=TD)),
    "bart": ("bart-base", dict(T_enc=TE, T_dec=TD)),
    "transformer": ("transformer-base", dict(T_enc=TE, T_dec=TD)),
    "vit": ("vit-base", {}),
    # RoBERTa's and BERT's architecture under other names: transformers' default configurations
    **{t: (str(ZOO / f"{t}.json"), dict(T=T_)) for t in ("camembert", "xlm-roberta", "data2vec-text", "ernie")},
    # BartForCausalLM and kin: the decoder alone, every layer's cross-attention held but not run
    "seq2seq_decoder": ("seq2seq_decoder", dict(T=T_, L=2, d=64, h=4, V=100, d_ff=160, T_max=32)),
    # encoders run as causal LMs (ElectraForCausalLM and kin)
    **{f: (f, dict(T=T_, L=2, d=64, h=4, V=100, d_ff=160, T_max=32))
       for f in ("electra", "megatron_bert", "xlm_roberta_xl", "roberta_prelayernorm", "bert_generation",
                 "roformer", "rembert", "roc_bert", "xmod", "big_bird", "xlm")},
}
FAMILIES = sorted(CASES)
ENCDEC = {"t5", "bart", "transformer"}


def model(family):
    name, lengths = CASES[family]
    m = symgpt.load(name, B=B_, **lengths)
    assert m.family.name == family
    return m


@pytest.mark.parametrize("family", FAMILIES)
def test_counts(family):
    m = model(family)
    for name in ("params", "flops.forward", "flops.train", "memory.total", "memory.kv_cache"):
        q = m.quantity(name)
        assert sum(q.values().values()) == q.value, name
        assert q.value is not None and q.value.is_Integer and q.value >= 0, (name, q.value)
    fwd, bwd, train = (m.quantity(n).value for n in ("flops.forward", "flops.backward", "flops.train"))
    assert train == fwd + bwd
    # default convention, matmuls only: every matmul has both gradients, except the first one of
    # ViT (the patch convolution: the pixels need no gradient) -> backward = 2 x forward - that;
    # BigBird's pooler runs under its LM head and the loss is not computed from it: no backward
    conv = sum(v for k, v in m.quantity("flops.forward").values().items() if "patch" in k)
    unused = sum(v for k, v in m.quantity("flops.forward").values().items() if k.startswith("pooler/")
                 and family == "big_bird")
    assert bwd == 2 * fwd - conv - 2 * unused
    s = m.sizes
    kv = m.quantity("memory.kv_cache").value
    if family in ENCDEC:
        d_head = s.get("d_head", sympy.Rational(s["d"], s["h"]))
        assert kv == 2 * s["L_dec"] * B_ * (TD + TE) * s["h"] * d_head * 4  # fp32: self + cross
    elif family == "seq2seq_decoder":  # self-attention only: the held cross-attention caches nothing
        assert kv == 2 * s["L"] * B_ * T_ * s["d"] * 4
    else:
        assert kv == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes(family, capsys):
    m = model(family)
    shapes = {t.name: t.shape for t in m.shapes()}
    if family in ENCDEC:
        assert shapes["input_ids"] == (B_, TE) and shapes["decoder_input_ids"] == (B_, TD)
        (cross,) = m.arch.find(roles.CROSS_SCORES)
        assert shapes[cross] == (B_, m.sizes["h"], TD, TE)
        assert shapes[m.arch.output] == (B_, TD, m.sizes["V"])
    elif family == "vit":
        patches = (m.sizes["S_img"] // m.sizes["P_patch"]) ** 2
        assert shapes["embeddings/cls_token"] == (B_, patches + 1, m.sizes["d"])
        assert shapes[m.arch.output] == (B_, m.sizes["N_cls"])
    else:
        assert shapes[m.arch.output] == (B_, T_, m.sizes["V"])
    argv = ["shapes", CASES[family][0], "--set", f"B={B_}"]
    argv += [a for k, v in CASES[family][1].items() for a in ("--set", f"{k}={v}")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert all(re.search(rf"^{re.escape(n)}\b", out, re.M) for n in shapes)


@pytest.mark.parametrize("family", FAMILIES)
def test_dot_two_clusters_and_cross_edges(family):
    m = model(family)
    dot = dot_text(m)
    for n in m.arch.order:
        assert f'"{n}" [' in dot, n
    for g in m.arch.stacks():
        assert f'subgraph "cluster_{g.name}"' in dot
    assert f"total {int(m.params.value):,}" in dot
    if family in ENCDEC:
        assert len(m.arch.stacks()) == 2
        for role in (roles.CROSS_KEY, roles.CROSS_VALUE):
            (node,) = m.arch.find(role)
            (src,) = m.arch.inputs_of(node)
            # the encoder's output feeds every decoder layer (across the clusters' borders: drawn
            # through a text node that carries its shape)
            assert f'"{src}" -> "{src} -> {node}"' in dot and f'"{src} -> {node}" -> "{node}"' in dot


@pytest.mark.parametrize("family", FAMILIES)
def test_latex_per_stack(family):
    m = model(family)
    tex = fragment(m, ["params", "shapes", "steps", "breakdown", "memory", "rule"])
    assert tex_int(m.params.value) in tex
    assert tex.count(r"\begin{") == tex.count(r"\end{")
    key = label_key(m.name)
    for g in m.arch.stacks():  # one per-block table per stack
        assert f"tab:symgpt-{key}-{label_key(g.name)}" in tex or f"tab:symgpt-{key}-blocks" in tex


@pytest.mark.parametrize("family", FAMILIES)
def test_queries(family):
    m = model(family)
    r = rule(m.params, "d")
    assert r.rule != 0 and -1 < r.relative_error <= 0
    dom = dominance(m.params, "d")
    assert sympy.simplify(sum(p.limit for p in dom.parts)) == 1
    assert compare(m.params, sympy.sstr(m.params.expr).replace("**", "^")).equal


@pytest.mark.parametrize("family", sorted(ENCDEC))
def test_crossover_and_dominance_with_two_lengths(family):
    m = model(family)
    fwd = m.quantity("flops.forward")
    c = crossover(fwd, "T_enc")
    assert c.value is not None and c.value > 0
    assert sympy.expand((c.fast - c.slow).xreplace({T_enc: c.solution})) == 0
    both = dominance(fwd, "T_enc,T_dec")  # both lengths grow together
    top = both.terms[0]
    assert top.order == 2 and top.expr.free_symbols >= {T_enc, T_dec}  # T_enc², T_dec², T_dec·T_enc
    assert sympy.simplify(sum(p.limit for p in both.parts)) == 1


def test_crossover_cli_as_t_enc(capsys):
    assert main(["crossover", "t5-small", "flops.forward", "--as", "T_enc", "--set", "T_dec=128"]) == 0
    out = capsys.readouterr().out
    assert "as T_enc grows" in out and "4·B·L·T_enc²·d_head·h" in out
    m = symgpt.load("t5-small", T_dec=128)
    c = crossover(m.quantity("flops.forward"), "T_enc")
    from symgpt.render.query_text import value_text

    assert c.value is not None and f"   = {value_text(c.value)}" in out
    # with T_dec free the crossover depends on it, and the output says so
    assert main(["crossover", "t5-small", "flops.forward", "--as", "T_enc"]) == 0
    assert "note: the crossover depends on T_dec: bind it with --set" in capsys.readouterr().out


def test_scaling_table_mixes_families(capsys):
    names = ["gpt2-small", "bert-base", "t5-small", "vit-base"]
    assert main(["table", *names, "--format", "csv", "--columns", "L,d,params"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    counts = {r.split(",")[0]: int(r.split(",")[-1]) for r in rows[1:]}
    assert counts == {n: int(symgpt.load(n).params.value) for n in names}


@pytest.mark.parametrize("argv", [
    ["params", "t5-small", "--json"],
    ["flops", "t5-small", "--set", "B=2", "--set", "T_enc=16", "--set", "T_dec=4", "--json"],
    ["memory", "bart-base", "--set", "B=2", "--set", "T_enc=16", "--set", "T_dec=4", "--json"],
    ["memory", "bert-base", "--set", "B=2", "--set", "T=16", "--head", "pooler", "--json"],
    ["flops", "vit-base", "--set", "B=2", "--json"],
    ["dominance", "t5-small", "flops.forward", "--as", "T_enc", "--as", "T_dec", "--json"],
    ["graph", "transformer-base"],
])
def test_cli_commands(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    if "--json" in argv:
        json.loads(out)
    assert out
