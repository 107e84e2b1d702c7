"""Parameter counts of GPT-2 against the seeds, the papers and real PyTorch/transformers models."""

import pytest
import sympy

import symgpt
from symgpt.derive.params import parameter_list
from symgpt.core.symbols import L, T_max, V, d

from oracles.measure import hf_param_count, param_count
from oracles.torch_gpt2 import GPTConfig, build

# (flags, expected count, where the number comes from)
SEED_COUNTS = [
    ({}, 124_439_808, "lecture note 7.3 §4.3; lesson LM4-T5 'with Q, K, V biases'"),
    ({"qkv_bias": False}, 124_412_160, "lesson LM4-T5 tied"),
    ({"tied": False}, 163_037_184, "conventions.md §10: untied with Q/K/V biases"),
    ({"tied": False, "qkv_bias": False}, 163_009_536, "lesson LM4-T5 'untied' (also no Q/K/V biases)"),
    ({"bias": False}, 124_337_664, "nanoGPT bias=False"),
]


@pytest.mark.parametrize("flags,expected,source", SEED_COUNTS)
def test_gpt2_small_counts_match_seeds(flags, expected, source):
    assert symgpt.load("gpt2-small", **flags).params == expected, source


def test_expression_is_the_issue_formula():
    q = symgpt.load("gpt2-small").params
    assert q.expr == sympy.expand(12 * L * d**2 + 13 * L * d + V * d + T_max * d + 2 * d)


@pytest.mark.parametrize("tied,qkv_bias", [(True, False), (False, False), (True, True), (False, True)])
def test_seed_002_formula_holds_symbolically(tied, qkv_bias):
    # lesson LM4-T5: P = V·d + L·d + N·(12d² + 10d) + 2d (+ V·d untied), in its notation L = context
    # length, N = blocks; "Q, K and V biases would add 3d per block".
    ctx, blocks = T_max, L
    formula = V * d + ctx * d + blocks * (12 * d**2 + 10 * d) + 2 * d
    formula += 0 if tied else V * d
    formula += blocks * 3 * d if qkv_bias else 0
    q = symgpt.load("gpt2", tied=tied, qkv_bias=qkv_bias).params
    assert sympy.expand(q.expr - formula) == 0


def test_seed_000_per_block_table():
    # lecture note 7.3 §4.1, row by row: (path, local, count per block)
    table = [
        ("blocks/norms/attention", "weight", d), ("blocks/norms/attention", "bias", d),
        ("blocks/attention/qkv", "weight", 3 * d**2), ("blocks/attention/qkv", "bias", 3 * d),
        ("blocks/attention/proj", "weight", d**2), ("blocks/attention/proj", "bias", d),
        ("blocks/norms/ffn", "weight", d), ("blocks/norms/ffn", "bias", d),
        ("blocks/ffn/up", "weight", 4 * d**2), ("blocks/ffn/up", "bias", 4 * d),
        ("blocks/ffn/down", "weight", 4 * d**2), ("blocks/ffn/down", "bias", d),
    ]
    m = symgpt.load("gpt2-small")
    rows = [(e.owner, e.local, e.count) for e in parameter_list(m.arch) if e.copies == L]
    assert [(p, n) for p, n, _ in rows] == [(p, n) for p, n, _ in table]
    for (_, _, got), (_, _, want) in zip(rows, table):
        assert sympy.expand(got - want) == 0
    # per-block total 7,087,872; 12 blocks 85,054,464 (lecture note 7.3 §4.1)
    assert m.params.part("blocks").value == 85_054_464
    assert m.value(m.params.part("blocks").expr / L) == 7_087_872


def test_seed_000_embeddings_table():
    q = symgpt.load("gpt2-small").params
    values = q.values()
    assert values["embedding/token"] == 38_597_376
    assert values["embedding/position"] == 786_432
    assert values["final_norm"] == 1_536
    assert values["lm_head"] == 0  # tied to E
    assert values["embedding/token"] + values["embedding/position"] + values["final_norm"] == 39_385_344


def _shares(q):
    total = q.value
    parts = {
        "feed-forward": q.part("blocks/ffn").value,
        "token emb.": q["embedding/token"].xreplace(q.bindings),
        "attention": q.part("blocks/attention").value,
        "position emb.": q["embedding/position"].xreplace(q.bindings),
        "layer norms": q.part("blocks/norms").value + q["final_norm"].xreplace(q.bindings),
        "output head": q["lm_head"].xreplace(q.bindings),
    }
    return {k: round(100 * float(v) / float(total), 1 if k != "layer norms" else 2) for k, v in parts.items()}


def test_seed_002_share_bar():
    # lesson LM4-T5's figure: 45.5 / 31.0 / 22.8 / 0.6 / 0.03 tied; 34.8 / 23.7 / 17.4 / 23.7 untied
    tied = _shares(symgpt.load("gpt2-small").params)
    assert (tied["feed-forward"], tied["token emb."], tied["attention"], tied["position emb."],
            tied["layer norms"]) == (45.5, 31.0, 22.8, 0.6, 0.03)
    untied = _shares(symgpt.load("gpt2-small", tied=False).params)
    assert (untied["feed-forward"], untied["token emb."], untied["attention"],
            untied["output head"]) == (34.8, 23.7, 17.4, 23.7)


HF_GPT2 = {
    "gpt2-small": dict(n_layer=12, n_head=12, n_embd=768),
    "gpt2-medium": dict(n_layer=24, n_head=16, n_embd=1024),
    "gpt2-large": dict(n_layer=36, n_head=20, n_embd=1280),
    "gpt2-xl": dict(n_layer=48, n_head=25, n_embd=1600),
}


@pytest.mark.parametrize("name", list(HF_GPT2))
@pytest.mark.parametrize("tied", [True, False])
def test_checkpoints_match_transformers(name, tied):
    cfg = {"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024,
           "tie_word_embeddings": tied, **HF_GPT2[name]}
    assert symgpt.load(name, tied=tied).params == hf_param_count(cfg)


CONFIGS = [
    dict(),
    dict(tied=False),
    dict(qkv_bias=False),
    dict(bias=False),
    dict(bias=False, vocab_multiple=64),
    dict(tied=False, vocab_multiple=64),
    dict(d_ff=1000),
]


@pytest.mark.parametrize("flags", CONFIGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "default")
def test_matches_own_pytorch_gpt2(flags):
    flags = dict(flags)
    d_ff = flags.pop("d_ff", None)
    cfg = GPTConfig(vocab_size=50257, block_size=1024, n_layer=12, n_head=12, n_embd=768, d_ff=d_ff,
                    tied=flags.get("tied", True), qkv_bias=flags.get("qkv_bias", True),
                    bias=flags.get("bias", True), vocab_multiple=flags.get("vocab_multiple"))
    model = build(cfg, device="meta")
    sizes = {"d_ff": d_ff} if d_ff else {}
    assert symgpt.load("gpt2-small", **flags, **sizes).params == param_count(model)


@pytest.mark.parametrize("name,L_,h_,d_", [("gpt3-125m", 12, 12, 768), ("gpt3-350m", 24, 16, 1024),
                                            ("gpt3-6.7b", 32, 32, 4096), ("gpt3-13b", 40, 40, 5120)])
def test_gpt3_rows_match_transformers(name, L_, h_, d_):
    cfg = {"model_type": "gpt2", "vocab_size": 50257, "n_positions": 2048,
           "n_layer": L_, "n_head": h_, "n_embd": d_}
    assert symgpt.load(name).params == hf_param_count(cfg)


def test_breakdown_sums_exactly_to_total():
    for name in ["gpt2-small", "gpt3-175b"]:
        q = symgpt.load(name, tied=False).params
        assert sum(q.values().values()) == q.value
        assert sympy.expand(sum(e for _, e in q.breakdown) - q.expr) == 0


def test_values_are_exact_integers():
    v = symgpt.load("gpt3-175b").params.value
    assert isinstance(v, sympy.Integer) and not isinstance(v, sympy.Float)
