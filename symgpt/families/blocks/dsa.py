"""DeepSeek Sparse Attention (DSA; DeepSeek-AI 2025, "DeepSeek-V3.2-Exp"): multi-latent attention
whose queries each read only the ``index_topk`` keys a *lightning indexer* selects, as
transformers' ``DeepseekV32Indexer`` and ``DeepseekV32Attention`` compute it:

* the indexer's query: ``wq_b`` (q_lora_rank -> H·D, from the attention's query latent
  ``q_a_layernorm(q_a_proj(x))``), split into H = ``index_n_heads`` heads of D =
  ``index_head_dim``, RoPE on the first qk_rope_head_dim dimensions of each;
* its key: ``wk`` (d -> D, one key shared by the H heads), ``k_norm`` (a LayerNorm with bias),
  RoPE likewise -- the tensor the indexer's cache holds per layer (transformers'
  ``cache.update_indexer``), beside the MLA latent and rotary key;
* the index scores ReLU(q·kᵀ/√D) per head, summed over the heads with the weights
  ``weights_proj(x)·H^(-1/2)`` (d -> H), causally masked; the top Min(index_topk, T) keys per
  query are kept, and the attention's scores outside them are masked.

Convention (*dense-masked*): transformers' eager path computes every query's T scores and masks
the unselected ones (``attention_mask.masked_fill``), so the attention's matmuls are counted over
all T keys, as for dense MLA; the indexer's own T×T scores are counted too. A sparse kernel
(FlashMLA's) reads only Min(index_topk, T) keys per query: not what is counted here.

The indexer runs under ``torch.no_grad``: its ops are declared ``no_grad`` (no backward, nothing
saved, its parameters get no gradient).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.symbols import T, d
from ...graph import roles as R


def indexer(flags, table):
    """The ``sparse_index`` callback of ``attention()`` for DSA flags (None without an indexer)."""
    if not flags.get("index_heads"):
        return None
    H, D, k = (sympy.Integer(flags[n]) for n in ("index_heads", "index_head_dim", "index_topk"))
    rotary = ops.Rotary(interleaved=bool(flags.get("index_rope_interleave")))

    def build(g, x, q_latent, module="attention"):
        def op(name, o, *inputs, role, label, **kw):
            return g.op(f"{module}/indexer/{name}", o, *inputs, role=role, label=label, no_grad=True, **kw)

        q = op("wq_b", ops.Linear(q_latent_width(g, q_latent), H * D, bias=False), q_latent,
               role=R.INDEX_QUERY, label="Q_I")                                         # (B, T, H·D)
        q = op("q_heads", ops.SplitHeads(H, D), q, role=R.INDEX_QUERY_HEADS, label="Q_I heads")  # (B, H, T, D)
        q = op("q_rotary", rotary, q, table, role=R.INDEX_QUERY_ROTARY, label="RoPE(Q_I)")
        kk = op("wk", ops.Linear(d, D, bias=False), x, role=R.INDEX_KEY, label="K_I")   # (B, T, D)
        kk = op("k_norm", ops.LayerNorm(D), kk, role=R.INDEX_KEY_NORM, label="norm(K_I)")
        kk = op("k_head", ops.SplitHeads(sympy.Integer(1), D), kk, role=R.INDEX_KEY_HEAD,
                label="K_I head")                                                       # (B, 1, T, D)
        kk = op("k_rotary", rotary, kk, table, role=R.INDEX_KEY_ROTARY, label="RoPE(K_I)",
                cached=True)                                                            # (B, 1, T, D): cached
        s = op("scores", ops.Matmul("attention_scores", transpose_b=True, causal=True), q, kk,
               role=R.INDEX_SCORES, label="Q_I K_Iᵀ")                                   # (B, H, T, T)
        s = op("scale", ops.Scale(1 / sympy.sqrt(D)), s, role=R.INDEX_SCALE, label="/ √D")
        s = op("relu", ops.ReLU(), s, role=R.INDEX_RELU, label="ReLU")
        w = op("weights_proj", ops.Linear(d, H, bias=False), x, role=R.INDEX_WEIGHTS, label="w")  # (B, T, H)
        w = op("weights_scale", ops.Scale(1 / sympy.sqrt(H)), w, role=R.INDEX_WEIGHTS_SCALE,
               label="w / √H")
        i = op("sum", ops.HeadWeightedSum(), s, w, role=R.INDEX_SUM, label="I = Σ_j w_j S_j")  # (B, T, T)
        i = op("mask", ops.CausalMask(), i, role=R.INDEX_MASK, label="I + mask")
        return op("topk", ops.TopKIndices(sympy.Min(k, T)), i, role=R.INDEX_TOP_K,
                  label="top-k keys")                                                   # (B, T, Min(k, T))

    return build


def q_latent_width(g, node):
    return g.graph.nodes[node]["shape"][-1]
