"""One generic decoder-only Transformer, declared as data with flags, on the op catalog.

Every decoder here (GPT-2/GPT-3, GPT-NeoX/Pythia, OPT, LLaMA, Mistral, Mixtral, Qwen2, Gemma,
Phi-3, Falcon) is this graph with different flags; ``families/named.py`` registers each as a family
whose flag defaults are that architecture's. Node paths follow GPT-2's scheme
(``embedding/token``, ``blocks/norms/attention``, ``blocks/attention/q|k|v`` or ``qkv``,
``blocks/attention/scores``, ``values``, ``proj``, ``blocks/ffn/gate|up|down``,
``blocks/ffn/router``, ``blocks/ffn/experts/...``, ``final_norm``, ``lm_head``), so every
derivation, printer and query works for every family unchanged.

Sizes are symbols; a few are used only when bound (or forced by a flag), as GPT-2 does with
``d_ff``: ``h_kv`` (else h: multi-head attention), ``d_head`` (else d/h), ``d_ff`` (else 4d for
a plain MLP; a gated FFN always uses ``d_ff``), ``W`` (with ``window``), ``E`` and ``k`` (with
``moe``), ``T_max`` (learned positions).
"""

from __future__ import annotations

import sympy

from .. import ops
from .. import roles
from ..errors import SymgptError
from ..graph import Builder
from .stacks import layers, stacks  # noqa: F401  (stacks: re-exported)
from ..symbols import B, E, L, T, T_max, V, W, d, d_ff, d_head, h, h_kv, k


def padded(vocab, multiple):
    """The vocabulary rounded up to a multiple (nanoGPT pads 50257 -> 50304 with 64)."""
    return vocab if not multiple else multiple * sympy.ceiling(vocab / multiple)

#: every flag of the decoder families, with the generic default
FLAGS: dict[str, object] = {
    "tied": False,            # LM head shares the token embedding
    "norm": "rmsnorm",        # layernorm | rmsnorm
    "norm_bias": True,        # LayerNorm has a shift (layernorm only)
    "positions": "rotary",    # rotary | learned | alibi
    "rotary_pct": None,       # percent of each head's dimensions rotated (None: 100)
    "pos_offset": None,       # extra rows of the learned table (OPT: 2)
    "embed_scale": False,     # multiply the token embeddings by sqrt(d) (Gemma)
    "embed_dim": None,        # embedding width when it differs from d (OPT-350m: 512)
    "gqa": False,             # use the symbol h_kv even while it is unbound
    "fused_qkv": False,       # one Q/K/V projection, split afterwards
    "qkv_bias": False,        # Q/K/V projections have a bias
    "proj_bias": False,       # the attention output projection has a bias
    "ffn": "gated",           # gated (three matrices: SwiGLU/GeGLU) | mlp (two matrices)
    "activation": "silu",     # silu | gelu | gelu_tanh | relu
    "fused_gate_up": False,   # one gate/up projection, split afterwards (Phi-3)
    "mlp_bias": False,        # FFN linear layers have biases
    "parallel": False,        # attention and FFN read the same input (GPT-NeoX, Falcon)
    "shared_norm": False,     # a parallel block uses one norm for both branches (Falcon-7B)
    "post_norm": False,       # LayerNorm after each residual add (OPT-350m)
    "final_norm": True,       # a norm before the LM head
    "window": False,          # sliding-window attention over W keys
    "moe": False,             # mixture of E experts, k active per token
    "vocab_multiple": None,   # pad the vocabulary up to a multiple
    "dropout": False,         # dropout layers present
    "loss": True,             # the graph ends in the cross-entropy loss
    # --- the families of issue 16 (Qwen3, Qwen-MoE, Gemma 2/3, Phi-2, StarCoder2, OLMo 2) ---
    "qk_norm": "none",        # none | head (a norm of d_head on each Q/K head) | full (of h·d_head)
    "pre_norm": True,         # a norm before each branch (OLMo 2 has none)
    "branch_norms": False,    # a norm on each branch's output before its residual add (Gemma 2, OLMo 2)
    "query_scalar": None,     # scores scaled by 1/sqrt(this) instead of 1/sqrt(d_head) (Gemma 2)
    "attn_softcap": None,     # c: scores soft-capped to c·tanh(S/c) (Gemma 2: 50)
    "logit_softcap": None,    # c: logits soft-capped (Gemma 2: 30)
    "head_bias": False,       # the LM head has a bias (Phi-2)
    "full_every": None,       # p: with window, one layer in every p attends to every key (Gemma 2: 2, Gemma 3: 6)
    "dense_layers": None,      # with moe: this many first layers have a dense FFN (DeepSeek: first_k_dense_replace)
    "dense_ff": None,         # the dense layers' FFN width when it is not d_ff (an integer)
    "shared_expert": "none",  # none | gated (Qwen2-MoE: sigmoid-gated) | plain (DeepSeek) shared expert
    "shared_ff": None,        # the shared expert's width (an integer; None: d_ff)
    "router": "softmax",      # softmax | sigmoid (DeepSeek-V3) router scores
    "topk_norm": True,        # the top-k router weights are divided by their sum (Mixtral; norm_topk_prob)
    "norm_offset": False,     # Gemma's RMSNorm scales by (1 + w) (same parameters; hf-eager keeps 1 + w)
    "local_rope": False,      # sliding-window layers have rotary tables of their own (Gemma 3)
    "kv_index": False,        # with fused_qkv: K and V taken by list indexing (Falcon; hf-eager keeps the indices)
}

CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "positions": ("rotary", "learned", "alibi"),
    "ffn": ("gated", "mlp"),
    "activation": ("silu", "gelu", "gelu_tanh", "gelu_new", "relu"),
    "qk_norm": ("none", "head", "full"),
    "shared_expert": ("none", "gated", "plain"),
    "router": ("softmax", "sigmoid"),
}

FLAG_HELP = {
    "tied": "LM head shares the token embedding matrix",
    "norm": "layernorm or rmsnorm",
    "norm_bias": "LayerNorm has a bias (layernorm only)",
    "positions": "rotary (RoPE, no parameters), learned (a T_max x d table) or alibi",
    "rotary_pct": "percent of each head's dimensions rotated (GPT-NeoX: 25); unset = 100",
    "pos_offset": "extra rows of the learned position table (OPT: 2)",
    "embed_scale": "token embeddings are multiplied by sqrt(d) (Gemma)",
    "embed_dim": "embedding width if not d: projections in and out (OPT-350m: 512)",
    "gqa": "key/value heads are the symbol h_kv even when unbound",
    "fused_qkv": "one fused Q/K/V projection",
    "qkv_bias": "Q/K/V projections have a bias",
    "proj_bias": "attention output projection has a bias",
    "ffn": "gated (SwiGLU/GeGLU, three matrices) or mlp (two matrices)",
    "activation": "silu, gelu, gelu_tanh or relu",
    "fused_gate_up": "one fused gate/up projection (Phi-3)",
    "mlp_bias": "FFN linear layers have biases",
    "parallel": "attention and FFN in parallel on the same input",
    "shared_norm": "a parallel block has one norm for both branches",
    "post_norm": "post-LN: norm after each residual add",
    "final_norm": "a final norm before the LM head",
    "window": "sliding-window attention: each query sees Min(T, W) keys",
    "moe": "mixture-of-experts FFN: E experts, top-k routing",
    "vocab_multiple": "pad the vocabulary up to a multiple",
    "dropout": "dropout layers present (masks saved for backward)",
    "loss": "the graph ends in the cross-entropy loss",
    "qk_norm": "head: a norm of d_head on each query/key head (Qwen3, Gemma 3); full: of all heads (OLMo 2)",
    "pre_norm": "a norm before each branch (false: OLMo 2, which norms the branch outputs only)",
    "branch_norms": "a norm on the attention and FFN outputs before each residual add (Gemma 2/3, OLMo 2)",
    "query_scalar": "scores scaled by 1/sqrt(query_scalar) instead of 1/sqrt(d_head) (Gemma 2)",
    "attn_softcap": "attention scores soft-capped to c*tanh(S/c) (Gemma 2: 50)",
    "logit_softcap": "logits soft-capped to c*tanh(z/c) (Gemma 2: 30)",
    "head_bias": "the LM head has a bias (Phi-2)",
    "full_every": "with window: one layer in every p attends to all keys (a stack of its own, floor(L/p) layers)",
    "dense_layers": "with moe: the first n layers have a dense FFN (a stack of its own, n layers)",
    "dense_ff": "width of the dense layers' FFN when not d_ff",
    "shared_expert": "gated (Qwen2-MoE) or plain (DeepSeek): a shared expert every token runs",
    "shared_ff": "width of the shared expert (unset: d_ff)",
    "router": "softmax or sigmoid (DeepSeek-V3) router scores",
    "topk_norm": "the top-k router weights are renormalised to sum to 1 (norm_topk_prob)",
    "norm_offset": "RMSNorm scales by (1 + w), Gemma's parametrisation (memory under hf-eager)",
    "local_rope": "sliding-window layers have their own rotary tables (Gemma 3: another base)",
    "kv_index": "with fused_qkv: K and V are taken from the fused output by list indexing, a one-entry "
                "index each (Falcon: [..., [-2], :]); hf-eager keeps the int64 indices",
}

SIZES = ("L", "d", "h", "V")
OPTIONAL = ("d_ff", "h_kv", "d_head", "T_max", "W", "E", "k")


def _activation(name: str) -> ops.Op:
    return {"silu": ops.SiLU(), "gelu": ops.GELU(approximate="none"),
            "gelu_tanh": ops.GELU(approximate="tanh"), "relu": ops.ReLU(),
            "gelu_new": ops.GELU(approximate="tanh", composite=True)}[name]


def _norm(flags, dim) -> ops.Op:
    if flags["norm"] == "rmsnorm":
        return ops.RMSNorm(dim, offset=bool(flags.get("norm_offset")))
    return ops.LayerNorm(dim, bias=bool(flags["norm_bias"]))


class _Sizes:
    """The symbolic sizes a build uses, chosen from the flags and the bound names."""

    def __init__(self, flags, bound):
        self.bound = bound
        self.dh = d_head if "d_head" in bound else d / h
        self.kv = h_kv if ("h_kv" in bound or flags["gqa"]) else h
        self.ff = d_ff if ("d_ff" in bound or flags["ffn"] == "gated" or flags["moe"]) else 4 * d
        self.vocab = padded(V, flags["vocab_multiple"])
        self.window = W if flags["window"] else None
        pct = flags["rotary_pct"]
        if pct is not None and not 1 <= pct <= 100:
            raise SymgptError(f"rotary_pct must be between 1 and 100, got {pct}")
        self.rot = sympy.Rational(pct or 100, 100)
        self.shared = sympy.Integer(flags["shared_ff"]) if flags["shared_ff"] else self.ff

    def layer(self, flags):
        """The sizes of one stack's layers, whose flags may differ from the model's (a dense
        stack before the experts, a full-attention stack among sliding ones)."""
        out = _Sizes.__new__(_Sizes)
        out.__dict__.update(self.__dict__)
        out.window = W if flags["window"] else None
        if not flags["moe"] and flags["dense_ff"]:
            out.ff = sympy.Integer(flags["dense_ff"])
        return out


def build(flags, bound, name="decoder", labels=None):
    """The decoder's graph for *flags*; *labels* renames nodes' labels by path."""
    s = _Sizes(flags, bound)
    if flags["post_norm"] and flags["parallel"]:
        raise SymgptError("post_norm and parallel blocks cannot be combined")
    g = Builder(name)
    if s.dh is not d_head:
        g.require("integer", d / h, "d must be divisible by h")
    if s.kv is h_kv:
        g.require("integer", h / h_kv, "h must be a multiple of h_kv")
    if flags["moe"]:
        g.require("le", k - E, "k (experts per token) must not exceed E (experts)")
    if flags["dense_layers"]:
        g.require("le", flags["dense_layers"] + 1 - L, "L must exceed dense_layers (some layers have experts)")
    if flags["full_every"]:
        g.require("le", flags["full_every"] - L, "L must be at least full_every (one full-attention layer)")

    x = _embeddings(g, flags, s)
    table = None
    if flags["positions"] == "rotary":
        table = g.op("embedding/rotary", ops.RotaryTable(s.dh, s.rot), "input_ids", label="cos, sin")
    local = table
    if table is not None and flags["local_rope"] and flags["full_every"]:
        local = g.op("embedding/rotary_local", ops.RotaryTable(s.dh, s.rot), "input_ids",
                     label="cos, sin (local)", role=roles.ROTARY_TABLE)
    x = layers(g, flags, s, x, lambda g, f, s, x: _block(g, f, s, x, local if f["window"] else table))
    if flags["final_norm"]:
        x = g.op("final_norm", _norm(flags, d), x, label="final norm")                # (B, T, d)
    width = d
    if flags["embed_dim"]:
        width = sympy.Integer(flags["embed_dim"])
        x = g.op("embedding/project_out", ops.Linear(d, width, bias=False), x,
                 label="project out")                                                 # (B, T, e)
    tie = {"weight": g.param("embedding/token")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(width, s.vocab, bias=bool(flags["head_bias"]), tag="lm_head"), x,
                  tie=tie, label="logits")                                            # (B, T, V)
    if flags["logit_softcap"]:
        logits = g.op("lm_head_softcap", ops.SoftCap(sympy.Integer(flags["logit_softcap"])), logits,
                      label="logits soft-capped", role=roles.LOGIT_SOFTCAP)          # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss") if flags["loss"] else ""
    arch = g.build(output=logits, loss=loss, flags=dict(flags))
    for path, label in (labels or {}).items():  # a family's own names for some nodes
        if path in arch.graph:
            arch.graph.nodes[path]["label"] = label
    return arch


def _embeddings(g, flags, s):
    ids = g.input("input_ids", (B, T), label="input ids")                             # (B, T)
    width = sympy.Integer(flags["embed_dim"]) if flags["embed_dim"] else d
    x = g.op("embedding/token", ops.Embedding(s.vocab, width), ids, label="tok_emb")  # (B, T, e)
    if flags["embed_dim"]:
        x = g.op("embedding/project_in", ops.Linear(width, d, bias=False), x,
                 label="project in")                                                  # (B, T, d)
    if flags["embed_scale"]:
        x = g.op("embedding/scale", ops.Scale(sympy.sqrt(d), tensor=True), x,
                 label="tok_emb × √d")                                                # (B, T, d)
    if flags["positions"] == "learned":
        g.require("le", T - T_max, "T must not exceed T_max, the length of the learned position table")
        pos = g.op("embedding/position",
                   ops.PositionEmbedding(T_max, d, offset=flags["pos_offset"] or 0,
                                       ids="mask" if flags["pos_offset"] else "range"), ids,
                   label="pos_emb")                                                   # (T, d)
        x = g.op("embedding/add", ops.Add(), x, pos, label="X0")                      # (B, T, d)
    if flags["dropout"]:
        x = g.op("embedding/dropout", ops.Dropout(), x)
    return x


def _block(g, flags, s, x, table):
    post = flags["post_norm"]
    pre = flags["pre_norm"] and not post
    if flags["branch_norms"] and (post or flags["parallel"]):
        raise SymgptError("branch_norms cannot be combined with post_norm or parallel blocks")
    a_in = g.op("norms/attention", _norm(flags, d), x, label="norm_attn") if pre else x  # (B, T, d)
    o = _attention(g, flags, s, a_in, table)                                          # (B, T, d)
    if flags["branch_norms"]:
        o = g.op("norms/post_attention", _norm(flags, d), o, label="norm(attn_out)",
                 role=roles.POST_ATTENTION_NORM)                                      # (B, T, d)
    if flags["parallel"]:
        if flags["shared_norm"]:
            f_in = a_in
        else:
            f_in = g.op("norms/ffn", _norm(flags, d), x, label="norm_ffn")            # (B, T, d)
        f = _ffn(g, flags, s, f_in)                                                   # (B, T, d)
        x = g.op("attention/residual", ops.Add(), x, o, label="X + attn_out")         # (B, T, d)
        return g.op("ffn/residual", ops.Add(), x, f, label="X + attn_out + ffn_out")  # (B, T, d)
    x = g.op("attention/residual", ops.Add(), x, o, label="X + attn_out")             # (B, T, d)
    if post:
        x = g.op("norms/attention", _norm(flags, d), x, label="norm_attn")            # (B, T, d)
    f_in = g.op("norms/ffn", _norm(flags, d), x, label="norm_ffn") if pre else x     # (B, T, d)
    f = _ffn(g, flags, s, f_in)                                                       # (B, T, d)
    if flags["branch_norms"]:
        f = g.op("norms/post_ffn", _norm(flags, d), f, label="norm(ffn_out)",
                 role=roles.POST_FFN_NORM)                                            # (B, T, d)
    x = g.op("ffn/residual", ops.Add(), x, f, label="X + ffn_out")                    # (B, T, d)
    if post:
        x = g.op("norms/ffn", _norm(flags, d), x, label="norm_ffn")                   # (B, T, d)
    return x


def _attention(g, flags, s, a, table):
    dh, kv, qb = s.dh, s.kv, bool(flags["qkv_bias"])
    widths = {"q": h * dh, "k": kv * dh, "v": kv * dh}
    heads = {"q": h, "k": kv, "v": kv}
    proj, hd = {}, {}
    if flags["fused_qkv"]:  # each slice split into heads as it is taken (GPT-2's order)
        qkv = g.op("attention/qkv", ops.Linear(d, (h + 2 * kv) * dh, bias=qb), a,
                   label="QKV")                                                       # (B, T, (h+2h_kv)dh)
        start = sympy.Integer(0)
        for n in "qkv":
            index = 1 if flags["kv_index"] and n != "q" else 0  # Falcon: qkv[..., [-2], :], one entry
            proj[n] = g.op(f"attention/{n}", ops.Slice(start, widths[n], index=index), qkv,
                           label=n.upper())
            hd[n] = g.op(f"attention/{n}_heads", ops.SplitHeads(heads[n], dh), proj[n],
                         label=f"{n.upper()} heads")                                  # (B, heads, T, dh)
            start += widths[n]
    else:
        for n in "qkv":
            proj[n] = g.op(f"attention/{n}", ops.Linear(d, widths[n], bias=qb), a,
                           label=n.upper())                                           # (B, T, heads·dh)
    qk_roles = {"q": roles.QUERY_NORM, "k": roles.KEY_NORM}
    if flags["qk_norm"] == "full":  # OLMo 2: one norm over all heads of the projection
        if flags["fused_qkv"]:
            raise SymgptError("qk_norm=full with a fused QKV projection is not modelled")
        for n in "qk":
            proj[n] = g.op(f"attention/{n}_norm", _norm(flags, widths[n]), proj[n],
                           label=f"norm({n.upper()})", role=qk_roles[n])              # (B, T, heads·dh)
    if not flags["fused_qkv"]:
        hd = {n: g.op(f"attention/{n}_heads", ops.SplitHeads(heads[n], dh), proj[n],
                      label=f"{n.upper()} heads") for n in "qkv"}                     # (B, heads, T, dh)
    if flags["qk_norm"] == "head":  # Qwen3, Gemma 3: a norm of d_head on each head
        for n in "qk":
            hd[n] = g.op(f"attention/{n}_norm", _norm(flags, dh), hd[n],
                         label=f"norm({n.upper()} heads)", role=qk_roles[n])          # (B, heads, T, dh)
    if table is not None:
        for n in "qk":
            hd[n] = g.op(f"attention/{n}_rotary", ops.Rotary(), hd[n], table,
                         label=f"RoPE({n.upper()})")                                  # (B, heads, T, dh)
    if kv is not h:
        for n in "kv":
            hd[n] = g.op(f"attention/{n}_repeat", ops.RepeatKV(h / kv), hd[n],
                         label=f"{n.upper()} repeated")                               # (B, h, T, dh)
    sc = g.op("attention/scores", ops.Matmul("attention_scores", transpose_b=True, causal=True,
                                             window=s.window),
              hd["q"], hd["k"], label="S = Q Kᵀ")                                     # (B, h, T, T)
    scalar = sympy.Integer(flags["query_scalar"]) if flags["query_scalar"] else dh
    sc = g.op("attention/scale", ops.Scale(1 / sympy.sqrt(scalar)), sc, label="S / √d_h")  # (B, h, T, T)
    if flags["attn_softcap"]:
        sc = g.op("attention/softcap", ops.SoftCap(sympy.Integer(flags["attn_softcap"])), sc,
                  label="c·tanh(S/c)", role=roles.SCORE_SOFTCAP)                     # (B, h, T, T)
    if flags["positions"] == "alibi":
        sc = g.op("attention/alibi", ops.AlibiBias(), sc, label="S + ALiBi")          # (B, h, T, T)
    sc = g.op("attention/mask", ops.CausalMask(), sc, label="S + mask")               # (B, h, T, T)
    p = g.op("attention/softmax", ops.Softmax(), sc, label="A = softmax(S)")          # (B, h, T, T)
    if flags["dropout"]:
        p = g.op("attention/dropout", ops.Dropout(), p)
    z = g.op("attention/values", ops.Matmul("attention_values", causal=True, window=s.window),
             p, hd["v"], label="Z = A V")                                             # (B, h, T, dh)
    z = g.op("attention/merge", ops.MergeHeads(), z, label="Z merged")                # (B, T, h·dh)
    o = g.op("attention/proj", ops.Linear(h * dh, d, bias=bool(flags["proj_bias"])), z,
             label="attn_out")                                                        # (B, T, d)
    if flags["dropout"]:
        o = g.op("attention/dropout_out", ops.Dropout(), o)
    return o


def _ffn_body(g, flags, ff, x, prefix):
    """up (and gate) -> activation (-> gate product) -> down, under *prefix*."""
    bias = bool(flags["mlp_bias"])
    act = _activation(flags["activation"])
    if flags["ffn"] == "mlp":
        u = g.op(f"{prefix}up", ops.Linear(d, ff, bias=bias), x, label="H")              # (B, T, d_ff)
        u = g.op(f"{prefix}act", act, u, label=f"{act.title}(H)")                        # (B, T, d_ff)
    else:
        if flags["fused_gate_up"]:
            gu = g.op(f"{prefix}gate_up", ops.Linear(d, 2 * ff, bias=bias), x,
                      label="gate, up")                                                  # (B, T, 2d_ff)
            gate = g.op(f"{prefix}gate", ops.Slice(sympy.Integer(0), ff), gu, label="G")  # (B, T, d_ff)
            up = g.op(f"{prefix}up", ops.Slice(ff, ff), gu, label="U")                   # (B, T, d_ff)
        else:
            gate = g.op(f"{prefix}gate", ops.Linear(d, ff, bias=bias), x, label="G")     # (B, T, d_ff)
            up = g.op(f"{prefix}up", ops.Linear(d, ff, bias=bias), x, label="U")         # (B, T, d_ff)
        gate = g.op(f"{prefix}act", act, gate, label=f"{act.title}(G)")                  # (B, T, d_ff)
        u = g.op(f"{prefix}mul", ops.Mul(), gate, up, label=f"{act.title}(G) ⊙ U")       # (B, T, d_ff)
    return g.op(f"{prefix}down", ops.Linear(ff, d, bias=bias), u, label="ffn_out")       # (B, T, d)


def _ffn(g, flags, s, x):
    if not flags["moe"]:
        o = _ffn_body(g, flags, s.ff, x, "ffn/")
    else:
        r = g.op("ffn/router", ops.Linear(d, E, bias=False, tag="router"), x,
                 label="router logits")                                               # (B, T, E)
        score = ops.Sigmoid() if flags["router"] == "sigmoid" else ops.Softmax()
        r = g.op("ffn/router_softmax", score, r, label="router probs")                # (B, T, E)
        w = g.op("ffn/topk", ops.TopK(k, normalize=bool(flags["topk_norm"]), groups=_groups(flags)), r,
                 label="top-k weights")                                               # (B, T, k)
        with g.repeat("ffn/experts", E, active=k, label="expert"):
            e = _ffn_body(g, flags, s.ff, x, "")                                      # (B, T, d) per expert
        o = g.op("ffn/combine", ops.MoECombine(), e, w, label="Σ weights · experts")  # (B, T, d)
        if flags["shared_expert"] != "none":
            o = _shared_expert(g, flags, s, x, o)                                     # (B, T, d)
    if flags["dropout"]:
        o = g.op("ffn/dropout", ops.Dropout(), o)
    return o


def _shared_expert(g, flags, s, x, routed):
    """A shared expert every token runs (a group of one, so its parts read as an FFN's), added
    to the routed experts' sum; Qwen2-MoE scales it by sigmoid(x·w) first."""
    with g.repeat("ffn/shared_expert", 1, label="shared expert"):
        sh = _ffn_body(g, flags, s.shared, x, "")                                     # (B, T, d)
    if flags["shared_expert"] == "gated":
        gate = g.op("ffn/shared_expert_gate", ops.Linear(d, sympy.Integer(1), bias=False), x,
                    label="shared gate", role=roles.SHARED_GATE)                      # (B, T, 1)
        gate = g.op("ffn/shared_expert_gate_act", ops.Sigmoid(), gate,
                    label="σ(gate)", role=roles.SHARED_GATE_ACT)                      # (B, T, 1)
        sh = g.op("ffn/shared_expert_scale", ops.Mul(), gate, sh,
                  label="σ(gate) · shared", role=roles.SHARED_SCALE)                  # (B, T, d)
    return g.op("ffn/shared_add", ops.Add(), routed, sh, label="routed + shared",
                role=roles.SHARED_ADD)                                                # (B, T, d)


def _groups(flags):
    """Group-limited routing (DeepSeek's ``n_group``/``topk_group``), when the family has it."""
    n, keep = flags.get("n_group"), flags.get("topk_group")
    if not n or not keep:
        return None
    return (n, 2 if flags["router"] == "sigmoid" else 1, keep)  # V3: the top 2 per group; V2: the max
