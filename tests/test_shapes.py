"""The shape trace against lecture note 7.3 §3, the worked-example note's steps and a real PyTorch forward pass."""

import pytest

import symgpt
from symgpt.derive.shapes import weight_shapes

from oracles.measure import record_shapes
from oracles.torch_gpt2 import GPTConfig, build


def _by_name(model, **bt):
    return {t.name: tuple(int(x) for x in t.shape) for t in model.shapes(**bt)}


# lecture note 7.3 §3 at B = 8, T = 1024: (symgpt tensor, the seed's shape comment)
SEED_000 = [
    ("input_ids", (8, 1024)),                        # §3.1
    ("embedding/token", (8, 1024, 768)),             # tok_emb
    ("embedding/position", (1024, 768)),             # pos_emb
    ("embedding/add", (8, 1024, 768)),               # X^(0)
    ("blocks/norms/attention", (8, 1024, 768)),      # X1 = LayerNorm_1(X)
    ("blocks/attention/qkv", (8, 1024, 2304)),       # QKV
    ("blocks/attention/q", (8, 1024, 768)),          # Q after split
    ("blocks/attention/k", (8, 1024, 768)),
    ("blocks/attention/v", (8, 1024, 768)),
    ("blocks/attention/q_heads", (8, 12, 1024, 64)),  # Q.view(...).transpose(1, 2)
    ("blocks/attention/k_heads", (8, 12, 1024, 64)),
    ("blocks/attention/v_heads", (8, 12, 1024, 64)),
    ("blocks/attention/scores", (8, 12, 1024, 1024)),  # S
    ("blocks/attention/mask", (8, 12, 1024, 1024)),
    ("blocks/attention/softmax", (8, 12, 1024, 1024)),  # A
    ("blocks/attention/values", (8, 12, 1024, 64)),     # Z = A @ V
    ("blocks/attention/merge", (8, 1024, 768)),         # Z.transpose(1, 2).view(B, T, d)
    ("blocks/attention/proj", (8, 1024, 768)),          # attn_out
    ("blocks/attention/residual", (8, 1024, 768)),
    ("blocks/norms/ffn", (8, 1024, 768)),               # X2
    ("blocks/ffn/up", (8, 1024, 3072)),                 # H
    ("blocks/ffn/act", (8, 1024, 3072)),                # GELU(H)
    ("blocks/ffn/down", (8, 1024, 768)),                # ffn_out
    ("blocks/ffn/residual", (8, 1024, 768)),
    ("final_norm", (8, 1024, 768)),                     # §3.4
    ("lm_head", (8, 1024, 50257)),                      # logits
]


def test_seed_000_trace():
    got = _by_name(symgpt.load("gpt2-small"), B=8, T=1024)
    for name, shape in SEED_000:
        assert got[name] == shape, name
    order = list(got)
    assert order.index("input_ids") == 0 and order.index("lm_head") > order.index("final_norm")


def test_seed_000_weight_shapes():
    # lecture note 7.3 §3.3 comments: W_attn (768, 2304), W_O (768, 768), W_1 (768, 3072), W_2 (3072, 768);
    # §3.2: E (50257, 768), W_pos (1024, 768)
    m = symgpt.load("gpt2-small")
    w = {n: tuple(int(x.xreplace(m.bindings)) for x in s) for n, s in weight_shapes(m.arch)}
    assert w["blocks/attention/qkv.weight"] == (768, 2304)
    assert w["blocks/attention/proj.weight"] == (768, 768)
    assert w["blocks/ffn/up.weight"] == (768, 3072)
    assert w["blocks/ffn/down.weight"] == (3072, 768)
    assert w["embedding/token.weight"] == (50257, 768)
    assert w["embedding/position.weight"] == (1024, 768)
    assert "lm_head.weight" not in w  # tied: the LM head uses E


def test_seed_001_steps_at_T_3():
    # the worked-example note, "The cat sat" (3 tokens), one sequence: shapes without the batch axis
    got = {k: v[1:] if len(v) > 1 and v[0] == 1 and k != "embedding/position" else v
           for k, v in _by_name(symgpt.load("gpt2-small"), B=1, T=3).items()}
    steps = [
        ("embedding/token", (3, 768)),              # step 1
        ("embedding/position", (3, 768)),           # step 2
        ("embedding/add", (3, 768)),                # x_0
        ("blocks/norms/attention", (3, 768)),       # step 3
        ("blocks/attention/qkv", (3, 2304)),
        ("blocks/attention/q", (3, 768)),
        ("blocks/attention/q_heads", (12, 3, 64)),  # step 4
        ("blocks/attention/scores", (12, 3, 3)),    # step 5: Q_h K_h^T is (3, 3) per head
        ("blocks/attention/values", (12, 3, 64)),   # A_h is (3, 64)
        ("blocks/attention/merge", (3, 768)),       # step 6
        ("blocks/attention/proj", (3, 768)),
        ("blocks/attention/residual", (3, 768)),    # step 7
        ("blocks/ffn/up", (3, 3072)),               # step 8
        ("blocks/ffn/down", (3, 768)),
        ("blocks/ffn/residual", (3, 768)),          # step 9
        ("final_norm", (3, 768)),                   # step 22
        ("lm_head", (3, 50257)),                    # step 23
    ]
    for name, shape in steps:
        assert got[name] == shape, name
    assert symgpt.load("gpt2-small").arch.groups["blocks"].repeat.xreplace(
        symgpt.load("gpt2-small").bindings) == 12  # steps 10-21 repeat the block


def test_seed_002_shapes_table():
    got = _by_name(symgpt.load("gpt2-small"), B=2, T=16)
    assert got["input_ids"] == (2, 16)
    assert got["embedding/add"] == (2, 16, 768)
    assert got["blocks/attention/q_heads"] == (2, 12, 16, 64)
    assert got["blocks/attention/scores"] == (2, 12, 16, 16)
    assert got["blocks/ffn/up"] == (2, 16, 3072)
    assert got["lm_head"] == (2, 16, 50257)


# symgpt tensor -> name recorded in the PyTorch model's block 0 (or top level)
TORCH_NAMES = [
    ("embedding/token", "transformer.wte"),
    ("embedding/position", "transformer.wpe"),
    ("blocks/norms/attention", "transformer.h.0.ln_1"),
    ("blocks/attention/qkv", "transformer.h.0.attn.c_attn"),
    ("blocks/attention/q_heads", "transformer.h.0.attn.q"),
    ("blocks/attention/k_heads", "transformer.h.0.attn.k"),
    ("blocks/attention/v_heads", "transformer.h.0.attn.v"),
    ("blocks/attention/mask", "transformer.h.0.attn.scores"),
    ("blocks/attention/softmax", "transformer.h.0.attn.probs"),
    ("blocks/attention/merge", "transformer.h.0.attn.y"),
    ("blocks/attention/proj", "transformer.h.0.attn.c_proj"),
    ("blocks/norms/ffn", "transformer.h.0.ln_2"),
    ("blocks/ffn/up", "transformer.h.0.mlp.c_fc"),
    ("blocks/ffn/act", "transformer.h.0.mlp.gelu"),
    ("blocks/ffn/down", "transformer.h.0.mlp.c_proj"),
    ("final_norm", "transformer.ln_f"),
    ("lm_head", "lm_head"),
]


@pytest.mark.parametrize("cfg,B,T", [
    (dict(vocab_size=101, block_size=16, n_layer=2, n_head=4, n_embd=32), 2, 5),
    (dict(vocab_size=97, block_size=32, n_layer=1, n_head=3, n_embd=24, d_ff=40, tied=False), 3, 7),
])
def test_matches_a_real_pytorch_forward(cfg, B, T):
    torch_model = build(GPTConfig(**cfg))
    recorded = dict(record_shapes(torch_model, B, T))
    sizes = dict(L=cfg["n_layer"], h=cfg["n_head"], d=cfg["n_embd"], V=cfg["vocab_size"], T_max=cfg["block_size"])
    if cfg.get("d_ff"):
        sizes["d_ff"] = cfg["d_ff"]
    m = symgpt.load("gpt2", tied=cfg.get("tied", True), **sizes)
    got = _by_name(m, B=B, T=T)
    for ours, theirs in TORCH_NAMES:
        assert got[ours] == tuple(recorded[theirs]), (ours, theirs)
    # forward order agrees
    ours_order = [o for o, _ in TORCH_NAMES]
    assert sorted(ours_order, key=list(got).index) == ours_order


def test_symbolic_trace_uses_canonical_symbols():
    from symgpt.core.symbols import B, T, d, h
    t = {x.name: x.shape for x in symgpt.load("gpt2").shapes()}
    assert t["blocks/attention/scores"] == (B, h, T, T)
    assert t["blocks/attention/q_heads"] == (B, h, T, d / h)
