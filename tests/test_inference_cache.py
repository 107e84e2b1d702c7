"""What a cache holds is declared, not guessed: a family that caches a latent (multi-head latent
attention, DeepSeek-V2 style, without weight absorption) instead of K and V plugs in by
declaring ``cached=True`` on the latent and ``cached=False`` on the heads made from it."""

import sympy

from symgpt import ops
from symgpt.families import Family
from symgpt.graph.arch import Builder
from symgpt.model.model import Model
from symgpt.core.symbols import B, L, T, V, d, h

R = 64  # the latent width (a number: the canonical symbols hold no latent size)


def _build(flags, bound):
    dh = d / h
    g = Builder("latent")
    ids = g.input("input_ids", (B, T))
    x = g.op("embedding/token", ops.Embedding(V, d), ids)
    with g.repeat("blocks", L, carry=x):
        a = g.op("norms/attention", ops.RMSNorm(d), x)
        c = g.op("attention/latent", ops.Linear(d, R, bias=False), a, cached=True)       # (B, T, R)
        q = g.op("attention/q_heads", ops.SplitHeads(h, dh), g.op("attention/q", ops.Linear(d, d, bias=False), a))
        k = g.op("attention/k_heads", ops.SplitHeads(h, dh),
                 g.op("attention/k", ops.Linear(R, d, bias=False), c), cached=False)
        v = g.op("attention/v_heads", ops.SplitHeads(h, dh),
                 g.op("attention/v", ops.Linear(R, d, bias=False), c), cached=False)
        s = g.op("attention/scores", ops.Matmul("attention_scores", transpose_b=True, causal=True), q, k)
        p = g.op("attention/softmax", ops.Softmax(), g.op("attention/mask", ops.CausalMask(), s))
        z = g.op("attention/merge", ops.MergeHeads(), g.op("attention/values", ops.Matmul("attention_values"), p, v))
        x = g.op("attention/residual", ops.Add(), x, g.op("attention/proj", ops.Linear(d, d, bias=False), z))
    x = g.op("final_norm", ops.RMSNorm(d), x)
    return g.build(output=g.op("lm_head", ops.Linear(d, V, bias=False, tag="lm_head"), x), flags=dict(flags))


FAMILY = Family(name="latent-test", description="latent attention (test)", flags={}, sizes=("L", "d", "h", "V"),
                build=_build)


def test_a_declared_latent_cache():
    m = Model("latent", FAMILY, sizes=dict(L=2, d=256, h=4, V=1000, B=3, T=10))
    # the cache holds the latent: B·T·R per layer, 2 bytes -- not the K and V heads
    assert m.quantity("inference.kv_cache") == 2 * 3 * 10 * R * 2
    assert m.quantity("inference.kv_cache").paths() == ["blocks/attention/latent"]
    # decoding recomputes K and V from the cached latent for all T + 1 positions (no absorption):
    # 2·B·(T + 1)·R·d FLOPs each, per layer
    f = m.quantity("inference.decode.flops").values()
    assert f["blocks/attention/k"] == 2 * 2 * 3 * 11 * R * 256
    assert f["blocks/attention/q"] == 2 * 2 * 3 * 1 * 256 * 256
    # and the prefill is the forward pass as declared
    assert m.quantity("inference.prefill.flops") == m.quantity("flops.forward")
    assert sympy.expand(m.quantity("inference.kv_cache").expr - 2 * B * T * R * L) == 0
