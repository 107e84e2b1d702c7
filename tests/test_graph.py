"""The DOT diagram of GPT-2-small against the worked-example note (the 23-step trace at T = 3), the shape trace,
the hand parameter counts, and golden files. No Graphviz needed here (see test_graph_svg.py).

Regenerate the golden files with ``SYMGPT_REGEN_GOLDEN=1 python -m pytest tests/test_graph.py``.
"""

import re

import pytest

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.families import family
from symgpt.model.model import Model
from symgpt.documents.diagrams import diagram, dot_text

NODE = re.compile(r'^\s*"([^"]+)" \[label=<(.*)>, (.*)\];$')
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)" \[label=<(.*)>((?:, [^<>]*)?)\];$')


def parse(dot: str):
    """(nodes: id -> (label text, attrs), edges: [(src, dst, label text, attrs)])."""
    nodes, edges = {}, []
    for line in dot.splitlines():
        if m := EDGE.match(line):
            edges.append((m[1], m[2], text(m[3]), m[4]))
        elif m := NODE.match(line):
            nodes[m[1]] = (text(m[2]), m[3])
    # a data edge across a cluster border is drawn through a text node "src -> dst" that carries
    # its shape: read it back as the one labelled edge it stands for
    for mid in [n for n, (_, attrs) in nodes.items() if " -> " in n and "shape=plain" in attrs]:
        src, dst = mid.split(" -> ")
        assert f'"{src}" -> "{mid}" [arrowhead=none];' in dot and f'"{mid}" -> "{dst}";' in dot, mid
        edges.append((src, dst, nodes.pop(mid)[0], ""))
    return nodes, edges


def text(html: str) -> str:
    """The visible text of an HTML-like label: lines joined by ' | '."""
    s = re.sub(r"<BR[^>]*/>", " | ", html)
    s = re.sub(r"<[^>]+>", "", s)
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#39;", "'") \
        .replace("&amp;", "&")


from helpers import golden  # noqa: E402


# --- the worked-example note: GPT-2 small, "The cat sat" = 3 tokens, d = 768, 12 layers, 12 heads ---------
# the tensor each op produces, as the seed states it (our tensors carry a leading batch B = 1)
SEED_001 = [
    ("embedding/token", (3, 768)),                # step 1
    ("embedding/position", (3, 768)),             # step 2
    ("embedding/add", (3, 768)),                  # step 2: x0
    ("blocks/norms/attention", (3, 768)),         # step 3
    ("blocks/attention/qkv", (3, 2304)),          # step 3
    ("blocks/attention/q", (3, 768)),             # step 3: split into Q, K, V
    ("blocks/attention/k", (3, 768)),
    ("blocks/attention/v", (3, 768)),
    ("blocks/attention/q_heads", (12, 3, 64)),    # step 4
    ("blocks/attention/k_heads", (12, 3, 64)),
    ("blocks/attention/v_heads", (12, 3, 64)),
    ("blocks/attention/scores", (3, 3)),          # step 5: Q_h K_hᵀ per head
    ("blocks/attention/values", (3, 64)),         # step 5: A_h per head
    ("blocks/attention/merge", (3, 768)),         # step 6: concatenate
    ("blocks/attention/proj", (3, 768)),          # step 6
    ("blocks/attention/residual", (3, 768)),      # step 7
    ("blocks/ffn/up", (3, 3072)),                 # step 8
    ("blocks/ffn/down", (3, 768)),                # step 8
    ("blocks/ffn/residual", (3, 768)),            # step 9
    ("final_norm", (3, 768)),                     # step 22
    ("lm_head", (3, 50257)),                      # step 23
]
# matrices the seed names: (node, its weight as drawn)
SEED_MATRICES = [("embedding/token", "50257×768"), ("embedding/position", "1024×768"),
                 ("blocks/attention/qkv", "768×2304"), ("blocks/attention/proj", "768×768"),
                 ("blocks/ffn/up", "768×3072")]


@pytest.fixture(scope="module")
def t3():
    m = symgpt.load("gpt2-small", B=1, T=3)
    return m, dot_text(m)


def dims(label: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", label))


@pytest.mark.parametrize("node,seed_shape", SEED_001)
def test_edge_shapes_match_seed_001(t3, node, seed_shape):
    _, dot = t3
    _, edges = parse(dot)
    out = [lab for s, _, lab, _ in edges if s == node]
    assert out, f"no edge leaves {node}"
    for lab in out:  # every consumer sees the same tensor
        got = dims(lab)
        assert got[-len(seed_shape):] == seed_shape, (node, lab)
        if node != "embedding/position":  # (T, d): the position table has no batch
            assert got[0] == 1 and len(got) >= len(seed_shape) + 1


def test_every_edge_matches_the_shape_trace(t3):
    m, dot = t3
    nodes, edges = parse(dot)
    trace = {t.name: "(" + ", ".join(str(int(x)) for x in t.shape) + ("," if len(t.shape) == 1 else "") + ")"
             for t in m.shapes(B=1, T=3)}
    data = [(s, d, lab) for s, d, lab, attrs in edges if "style=dashed" not in attrs]
    assert {(s, d) for s, d, _ in data} == {(u, v) for u, v, a in m.graph.edges(data=True) if a["kind"] == "data"}
    for s, d, lab in data:
        assert lab == trace[s], (s, d)


def test_one_node_per_op_and_input_and_the_tied_matrix(t3):
    m, dot = t3
    nodes, _ = parse(dot)
    assert set(nodes) == set(m.arch.order) | {"embedding/token.weight"}
    assert len(nodes) == 7 + 21 + 1  # ids, 2 embeddings, add, final norm, head, loss; 21 block ops; W_E


@pytest.mark.parametrize("node,matrix", SEED_MATRICES)
def test_weights_as_the_seed_names_them(t3, node, matrix):
    nodes, _ = parse(t3[1])
    assert matrix in nodes[node][0]


def test_block_cluster_once_with_its_repeat_count(t3):
    _, dot = t3
    assert dot.count("subgraph ") == 1
    assert 'subgraph "cluster_blocks" {' in dot
    assert "× L = 12" in dot  # the worked-example note: 12 layers, steps 10-21 repeat the block


def test_tied_weight_feeds_the_embedding_and_the_head(t3):
    nodes, edges = parse(t3[1])
    assert "shared matrix" in nodes["embedding/token.weight"][0]
    tied = [(s, d, lab, a) for s, d, lab, a in edges if s == "embedding/token.weight"]
    assert [(s, d) for s, d, _, _ in tied] == [("embedding/token.weight", "embedding/token"),
                                               ("embedding/token.weight", "lm_head")]
    assert "same 50257×768 matrix" in tied[1][2] and "style=dashed" in tied[1][3]
    assert "tied to tok_emb, no new params" in nodes["lm_head"][0]


def test_untied_head_owns_its_matrix():
    m = symgpt.load("gpt2-small", tied=False)
    nodes, edges = parse(dot_text(m))
    assert "embedding/token.weight" not in nodes
    assert not [e for e in edges if "same" in e[2]]
    # 768 x 50257 = 38,597,376 new parameters (lesson LM4-T5's untied count minus the tied one)
    assert "params 38,597,376 = 768×50257" in nodes["lm_head"][0]


# parameter counts by hand (tests/test_oracles.py: c_attn 1,769,472 + 2,304; wte 50257*768)
HAND = [("embedding/token", 50257 * 768), ("embedding/position", 1024 * 768),
        ("blocks/attention/qkv", 768 * 2304 + 2304), ("blocks/attention/proj", 768 * 768 + 768),
        ("blocks/ffn/up", 768 * 3072 + 3072), ("blocks/ffn/down", 3072 * 768 + 768),
        ("blocks/norms/attention", 2 * 768), ("final_norm", 2 * 768)]


@pytest.mark.parametrize("node,count", HAND)
def test_params_per_node(t3, node, count):
    nodes, _ = parse(t3[1])
    assert f"params {count:,} = " in nodes[node][0]


# colour = share of params: bins (0, .5], (.5, 1], (1, 2], (2, 5], (5, 10], (10, 20], (20, 40], (40, 100] %
TOTAL = 124_439_808
COLOUR = [("embedding/token", 50257 * 768 / TOTAL, "#993404"),        # 31.0 %
          ("blocks/ffn/up", 12 * (768 * 3072 + 3072) / TOTAL, "#993404"),  # 22.8 % (all 12 layers)
          ("blocks/attention/qkv", 12 * (768 * 2304 + 2304) / TOTAL, "#cc4c02"),  # 17.1 %
          ("blocks/attention/proj", 12 * (768 * 768 + 768) / TOTAL, "#ec7014"),  # 5.7 %
          ("embedding/position", 1024 * 768 / TOTAL, "#fee391"),    # 0.63 %
          ("final_norm", 1536 / TOTAL, "#fff7bc"),
          ("blocks/attention/softmax", 0, "#ffffff"), ("lm_head", 0, "#ffffff")]


@pytest.mark.parametrize("node,share,colour", COLOUR)
def test_colour_by_params(t3, node, share, colour):
    nodes, _ = parse(t3[1])
    label, attrs = nodes[node]
    assert f'fillcolor="{colour}"' in attrs
    if share:
        assert f"{100 * share:.1f} %" in label or (share < 0.001 and "<0.1 %" in label)


def test_legend_names_the_quantity_and_its_total(t3):
    assert "colour: share of parameters (total 124,439,808)" in text(t3[1])


def test_colour_by_flops_and_memory_match_hand_formulas():
    m = symgpt.load("gpt2-small", B=8, T=1024)
    nodes, _ = parse(dot_text(m, color_by="flops"))
    # Q·Kᵀ of one layer: 2·B·T²·d FLOPs (2 per multiply-add); a linear d -> n: 2·B·T·d·n
    assert "FLOPs 12,884,901,888 · 6.6 %" in nodes["blocks/attention/scores"][0]
    assert f"FLOPs {2 * 8 * 1024 * 768 * 2304:,}" in nodes["blocks/attention/qkv"][0]
    assert "share of forward FLOPs" in text(dot_text(m, color_by="flops"))
    nodes, _ = parse(dot_text(m, color_by="memory"))
    # the softmax output saved for backward: B·h·T² fp32 values
    assert f"saved {8 * 12 * 1024 * 1024 * 4:,} bytes" in nodes["blocks/attention/softmax"][0]
    assert 'fillcolor="#662506"' in nodes["blocks/attention/softmax"][1]  # the largest: > 40 %


def test_symbolic_model_draws_uncoloured_with_symbolic_shapes():
    nodes, edges = parse(dot_text(symgpt.load("gpt2")))
    assert ("blocks/attention/qkv", "blocks/attention/q", "(B, T, 3·d)") in [e[:3] for e in edges]
    assert ("blocks/attention/q_heads", "blocks/attention/scores", "(B, h, T, d/h)") in [e[:3] for e in edges]
    assert "params 3·d² + 3·d" in nodes["blocks/attention/qkv"][0]
    fills = {re.search(r'fillcolor="([^"]+)"', a)[1] for k, (_, a) in nodes.items() if k.startswith("blocks/")}
    assert fills == {"#ffffff", "#fbfbfb"}  # plain ops and views
    assert "not coloured" in text(dot_text(symgpt.load("gpt2")))


def test_escaping_user_text():
    evil = 'my_model&v2%#$"<b>{x}|y\\N\nz.json'
    m = Model(evil, family("gpt2"), sizes={"L": 2, "h": 2, "d": 8, "V": 11, "T_max": 5})
    dot = dot_text(m)
    title = re.search(r"<B>(.*?)</B>", dot)[1]
    assert title == 'my_model&amp;v2%#$&quot;&lt;b&gt;{x}|y\\N<BR ALIGN="CENTER"/>z.json'
    assert "<b>" not in dot
    # all quotes of the DOT text pair up on every line (none leaks from the name)
    assert all(line.count('"') % 2 == 0 for line in dot.splitlines())


def test_unrolled_chains_the_residual_stream():
    m = symgpt.load("gpt2-small", L=3, B=1, T=3)
    nodes, edges = parse(dot_text(m, unroll=True))
    inside = [n for n in m.arch.order if n.startswith("blocks/")]
    assert len(nodes) == (len(m.arch.order) - len(inside)) + 3 * len(inside) + 1
    pairs = {(s, d) for s, d, _, _ in edges}
    assert ("embedding/add", "blocks/norms/attention@1") in pairs
    assert ("embedding/add", "blocks/attention/residual@1") in pairs
    for i in (1, 2):
        assert ("blocks/ffn/residual@%d" % i, "blocks/norms/attention@%d" % (i + 1)) in pairs
        assert ("blocks/ffn/residual@%d" % i, "blocks/attention/residual@%d" % (i + 1)) in pairs
    assert ("blocks/ffn/residual@3", "final_norm") in pairs
    assert not [p for p in pairs if p[0] == "embedding/add" and p[1].endswith(("@2", "@3"))]
    dot = dot_text(m, unroll=True)
    assert [f"Transformer block {i}</B> of 3" in dot for i in (1, 2, 3)] == [True] * 3


@pytest.mark.parametrize("model,message", [
    ("gpt2", "repeat count L is not bound"),
    ("gpt3-175b", "96 copies is more than 64"),
])
def test_unroll_refused(model, message):
    with pytest.raises(SymgptError, match=message):
        dot_text(symgpt.load(model), unroll=True)


def test_unroll_at_the_cap():
    dot = dot_text(symgpt.load("gpt2-small", L=64), unroll=True)
    assert "Transformer block 64</B> of 64" in dot


@pytest.mark.parametrize("model,color_by,says", [
    ("gpt2-small", "flops", "not coloured: shares of forward FLOPs need numbers (set T with --set)"),
    ("gpt2", "params", "need numbers (set L, T_max, V, d with --set)"),
    ("gpt2-small", "none", "arrows: tensors with their shapes · dashed box"),
])
def test_legend_says_what_is_missing(model, color_by, says):
    legend = text(dot_text(symgpt.load(model), color_by=color_by).splitlines()[2])
    assert says in legend
    assert ("colour:" in legend) is False


def test_legend_mentions_tying_only_when_tied():
    assert "one matrix shared by two ops" in text(dot_text(symgpt.load("gpt2-small")))
    assert "one matrix shared by two ops" not in text(dot_text(symgpt.load("gpt2-small", tied=False)))


def test_bad_colour_is_one_clear_error():
    with pytest.raises(SymgptError, match="--color-by takes params, flops, memory, none"):
        dot_text(symgpt.load("gpt2-small"), color_by="speed")


def test_diagram_binds_sizes():
    d = diagram(symgpt.load("gpt2-small"), T=3, B=1)
    assert d.title == "gpt2-small" and "(1, 3, 768)" in d.dot and str(d) == d.dot


def test_golden_gpt2_small():
    golden("gpt2-small.dot", dot_text(symgpt.load("gpt2-small")))


def test_golden_gpt2_small_unrolled_by_flops():
    golden("gpt2-small-L2-unrolled.dot",
           dot_text(symgpt.load("gpt2-small", L=2, B=1, T=3), color_by="flops", unroll=True))


def test_deterministic_in_process():
    m = symgpt.load("gpt2-small", B=1, T=3)
    assert dot_text(m) == dot_text(m) == dot_text(symgpt.load("gpt2-small", B=1, T=3))
