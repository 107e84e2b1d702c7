"""The ``steps`` LaTeX section: the worked-example note's trace (GPT-2 small, B = 1, T = 3), the forward
pass as numbered steps, generated from the shape trace and the op graph.

Expected shapes are typed from the worked-example note (/work/shared/seeds/001*): the token table (50257, 768),
(3, 768) per token matrix, the position table (1024, 768), the QKV matrix (768, 2304) giving
(3, 2304), heads (12, 3, 64), one head (3, 64), scores (3, 3), sqrt(64) = 8, the output projection
(768, 768), the FFN 768 -> 3072 -> 768, the transposed token embedding (768, 50257), logits
(3, 50257) and the last position's (50257,). The seed numbers its steps 10 through 21 for layers
2 through 12 (twelve numbers for eleven layers); symgpt gives one step per layer: 10 through 20,
then 21 (final LayerNorm) and 22 (logits) where the seed has 22 and 23.
"""

from __future__ import annotations

import shutil

import pytest

import symgpt
from helpers import pdf_words
from symgpt.graph import roles
from symgpt.cli import main
from symgpt.core.notation import notation
from symgpt.documents.latex_doc import document, fragment
from symgpt.documents.latex_steps import steps


@pytest.fixture(scope="module")
def seed():
    return steps(symgpt.load("gpt2-small", B=1, T=3), notation())


def _step(ctx, number):
    return next(s for s in ctx["steps"] if s["number"] == str(number))


def _op(step, kind, role=None):
    return next(i for i in step["ops"] if i["kind"] == kind and (role is None or i.get("role") == role))


def test_worked_example_steps_and_shapes(seed):
    titles = [(s["number"], s["phase"]) for s in seed["steps"]]
    assert titles == [("1", "token"), ("2", "position"), ("3", "attn_in"), ("4", "heads"),
                      ("5", "attention"), ("6", "attn_out"), ("7", "residual"), ("8", "ffn"),
                      ("9", "residual"), ("10", "repeat"), ("21", "final"), ("22", "logits")]
    s1 = _op(_step(seed, 1), "embedding")
    assert s1["table"].dims == (50257, 768) and s1["out"].dims == (3, 768)
    s2 = _step(seed, 2)
    pos = _op(s2, "position_embedding")
    assert pos["table"].dims == (1024, 768) and pos["out"].dims == (3, 768) and pos["positions"] == "0, 1, 2"
    assert _op(s2, "add")["out"].dims == (3, 768)
    s3 = _step(seed, 3)
    assert _op(s3, "layernorm")["out"].dims == (3, 768)
    qkv = _op(s3, "linear", roles.QKV)
    assert qkv["weight"].dims == (768, 2304) and qkv["out"].dims == (3, 2304)
    split = _op(s3, "slice")
    assert split["count"] == "three" and split["same"] and split["out"].dims == (3, 768)
    heads = _op(_step(seed, 4), "split_heads")
    assert heads["count"] == "three" and heads["out"].dims == (12, 3, 64)
    assert (heads["heads"], heads["d_head"], heads["width"]) == ("12", "64", "768")
    att = _op(_step(seed, 5), "attention")
    assert att["q_head"].dims == (3, 64) and att["scores"].dims == (3, 3) and att["out_head"].dims == (3, 64)
    assert (att["scale"]["under"], att["scale"]["root"]) == ("64", "8") and att["causal"]
    s6 = _step(seed, 6)
    assert _op(s6, "merge_heads")["out"].dims == (3, 768) and _op(s6, "merge_heads")["heads"] == "12"
    proj = _op(s6, "linear", roles.OUT)
    assert proj["weight"].dims == (768, 768) and proj["out"].dims == (3, 768)
    s7 = _op(_step(seed, 7), "add")
    assert s7["names"] == ["x_1"] and s7["args"] == ["x_0", r"\text{attn\_output}"]
    s8 = _step(seed, 8)
    up, down = _op(s8, "linear", roles.FFN_UP), _op(s8, "linear", roles.FFN_DOWN)
    assert (up["width_in"], up["width_out"], up["weight"].dims) == ("768", "3{,}072", (768, 3072))
    assert down["width_out"] == "768" and down["out"].dims == (3, 768)
    assert _op(_step(seed, 9), "add")["names"] == ["x_2"]
    rep = _step(seed, 10)
    assert (rep["last"], rep["layers_to"], rep["more"]) == ("20", "12", "11")
    head = _op(_step(seed, 22), "linear", roles.HEAD)
    assert head["tied"] and head["weight"].dims == (768, 50257)
    assert head["out"].dims == (3, 50257) and head["last"].dims == (50257,)


def test_worked_example_prose(seed):
    tex = fragment(symgpt.load("gpt2-small", B=1, T=3), "steps")
    for line in (r"\paragraph{Step 1: Token Embedding Lookup.}",
                 r"which has shape $(50{,}257, 768)$. For 3 tokens, we retrieve a matrix of shape $(3, 768)$.",
                 r"We look up positions 0, 1, 2 in the position embedding table, of shape $(1{,}024, 768)$",
                 r"gives the initial hidden state $x_0$ of shape $(3, 768)$.",
                 r"creating $\hat{x}_0$ of shape $(3, 768)$ with mean 0 and variance 1 per position.",
                 r"combined $QKV$ projection matrix of shape $(768, 2{,}304)$ to get a $(3, 2{,}304)$ matrix,",
                 r"which we split into three $(3, 768)$ matrices for $Q$, $K$, and $V$.",
                 r"from $(3, 768)$ into $(12, 3, 64)$ by splitting the 768 dimensions across 12 heads of 64",
                 r"$\sqrt{64} = 8$",
                 r"We concatenate the 12 head outputs to get a $(3, 768)$ matrix,",
                 r"$x_1 = x_0 + \text{attn\_output}$",
                 r"expands from 768 to 3{,}072 dimensions",
                 r"\paragraph{Steps 10 through 20: Repeat for Layers 2 through 12.}",
                 r"passes through 11 more identical blocks.",
                 r"\paragraph{Step 21: Final LayerNorm.}",
                 r"After all 12 layers, we apply the final layer normalization to the $(3, 768)$ output.",
                 r"the transposed token embedding matrix of shape $(768, 50{,}257)$, creating logits of shape "
                 r"$(3, 50{,}257)$",
                 r"the last position's logits (shape $(50{,}257,)$)"):
        assert line in tex, line


@pytest.mark.parametrize("sizes, expect", [
    ({"L": 4}, [r"\paragraph{Steps 10 through 12: Repeat for Layers 2 through 4.}",
                r"\paragraph{Step 13: Final LayerNorm.}", "passes through 3 more identical blocks."]),
    ({"L": 2}, [r"\paragraph{Step 10: Repeat for Layer 2.}", "through 1 more identical block."]),
    ({"d": 1024, "h": 16}, [r"into $(16, 3, 64)$ by splitting the 1{,}024 dimensions across 16 heads",
                            r"matrix of shape $(1{,}024, 3{,}072)$"]),
    ({"tied": False}, [r"We multiply by the output matrix of shape $(768, 50{,}257)$"]),
    ({"B": 2}, [r"The input is $B = 2$ sequences of $T = 3$ token indices, shape $(2, 3)$.",
                r"$(2, 3, 768)$", r"into $(2, 12, 3, 64)$", r"$Q_h$ has shape $(3, 64)$"]),
])
def test_steps_follow_the_model(sizes, expect):
    tex = fragment(symgpt.load("gpt2-small", **{"B": 1, "T": 3, **sizes}), "steps")
    for line in expect:
        assert line in tex, line


def test_symbolic_steps():
    tex = fragment(symgpt.load("gpt2"), "steps")
    assert r"\paragraph{Steps 10 through $L + 8$: Repeat for Layers 2 through $L$.}" in tex
    assert r"\paragraph{Step $L + 10$: Logit Projection.}" in tex
    assert r"the scale $\sqrt{\frac{d}{h}}$" in tex


@pytest.mark.parametrize("name, expect", [
    ("llama-7b", [r"Final RMSNorm", r"query matrix of shape $(4{,}096, 4{,}096)$", "Rotary Position Tables"]),
    ("mixtral-8x7b", ["In each of the 2 experts a token is routed to (of 8)", "each token keeps its top 2"]),
    ("falcon-7b", ["Feed-Forward, in Parallel with Attention", "The single head of $K$ and $V$ is shared by all 71"]),
    ("mistral-7b", ["to at most the last 4{,}096 of them (a sliding window)"]),
    ("gemma-2b", [r"The embeddings are multiplied by $\sqrt{2{,}048} = 45.25$"]),
])
def test_other_families(name, expect):
    tex = fragment(symgpt.load(name, B=1, T=5), "steps")
    for line in expect:
        assert line in tex, line


def test_cli_and_standalone_pdf(tmp_path, capsys):
    assert main(["latex", "gpt2-small", "--what", "steps", "--set", "B=1", "--set", "T=3"]) == 0
    assert r"\paragraph{Step 22: Logit Projection.}" in capsys.readouterr().out
    assert shutil.which("latexmk") and shutil.which("pdftotext"), "TeX and poppler are required"
    tex = tmp_path / "steps.tex"
    tex.write_text(document(symgpt.load("gpt2-small", B=1, T=3), "steps"), encoding="utf-8")
    flat = pdf_words(tex)
    for words in ("Step 1: Token Embedding Lookup.", "Steps 10 through 20: Repeat for Layers 2 through 12.",
                  "Step 22: Logit Projection.", "transposed token embedding matrix of shape (768, 50,257)",
                  "logits of shape (3, 50,257)", "(12, 3, 64)"):
        assert words in flat, words
