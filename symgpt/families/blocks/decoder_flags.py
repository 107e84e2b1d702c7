"""The decoder families' configuration: every flag with its generic default, the choices a flag
takes, its help line, the size names, and the symbolic sizes a build uses (``BuildSizes``: chosen from
the flags and the names bound). ``families/named.py`` gives each family its own defaults.
"""

from __future__ import annotations

import sympy

from ...core.errors import SymgptError
from ...core.symbols import E, L, V, W, d, d_ff, d_ff_dense, d_ff_shared, d_head, h, h_kv, k


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
    # --- the flags of later decoders (Qwen3, Qwen-MoE, Gemma 2/3, Phi-2, StarCoder2, OLMo 2) ---
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
    # --- dense decoders read from config.json (BLOOM, GPT-Neo, Cohere, EXAONE 4, OLMo, ...) ---
    "embed_norm": False,      # a norm of the token embeddings (BLOOM's word_embeddings_layernorm)
    "scores_scaled": True,    # scores divided by sqrt(d_head) (false: GPT-Neo, which does not scale)
    "logit_divisor": None,    # n: logits multiplied by 1/n (Cohere's logit_scale 0.0625: 16)
    "nope_full": False,       # with full_every: the full-attention layers have no rotary (Cohere2, EXAONE 4)
    "norm_affine": True,      # norms have learned parameters (false: OLMo's LayerNorm, NanoChat's RMSNorm)
    "qk_norm_after_rope": False,  # with qk_norm=head: the per-head norm after the rotary (NanoChat)
}

CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "positions": ("rotary", "learned", "alibi", "sinusoidal"),
    "ffn": ("gated", "mlp"),
    "activation": ("silu", "gelu", "gelu_tanh", "gelu_new", "relu", "relu2", "xielu"),
    "qk_norm": ("none", "head", "full"),
    "shared_expert": ("none", "gated", "plain"),
    "router": ("softmax", "sigmoid"),
}

FLAG_HELP = {
    "tied": "LM head shares the token embedding matrix",
    "norm": "layernorm or rmsnorm",
    "norm_bias": "LayerNorm has a bias (layernorm only)",
    "positions": "rotary (RoPE, no parameters), learned (a T_max x d table), alibi, or sinusoidal "
                 "(fixed, no parameters: XGLM, CTRL)",
    "rotary_pct": "percent of each head's dimensions rotated (GPT-NeoX: 25); unset = 100",
    "pos_offset": "extra rows of the learned position table (OPT: 2)",
    "embed_scale": "token embeddings are multiplied by sqrt(d) (Gemma)",
    "embed_dim": "embedding width if not d: projections in and out (OPT-350m: 512)",
    "gqa": "key/value heads are the symbol h_kv even when unbound",
    "fused_qkv": "one fused Q/K/V projection",
    "qkv_bias": "Q/K/V projections have a bias",
    "proj_bias": "attention output projection has a bias",
    "ffn": "gated (SwiGLU/GeGLU, three matrices) or mlp (two matrices)",
    "activation": "silu, gelu, gelu_tanh, gelu_new, relu, relu2 (squared ReLU: Primer, Persimmon) or xielu "
                  "(xIELU with two learned one-element parameters: Apertus)",
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
    "embed_norm": "a norm of the token embeddings before the first layer (BLOOM)",
    "scores_scaled": "scores divided by sqrt(d_head) (false: GPT-Neo, which leaves them unscaled)",
    "logit_divisor": "logits multiplied by 1/n (Cohere: logit_scale 0.0625, n = 16)",
    "nope_full": "with full_every: the full-attention layers have no rotary positions (Cohere2, EXAONE 4)",
    "norm_affine": "norms have a learned scale (and shift); false: parameter-free norms (OLMo's LayerNorm, "
                   "NanoChat's RMSNorm)",
    "qk_norm_after_rope": "with qk_norm=head: each query/key head is normed after the rotary, not before (NanoChat)",
}

SIZES = ("L", "d", "h", "V")
OPTIONAL = ("d_ff", "h_kv", "d_head", "T_max", "W", "E", "k")


class BuildSizes:
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
        self.shared = d_ff_shared if flags["shared_ff"] else self.ff

    def layer(self, flags):
        """The sizes of one stack's layers, whose flags may differ from the model's (a dense
        stack before the experts, a full-attention stack among sliding ones)."""
        out = BuildSizes.__new__(BuildSizes)
        out.__dict__.update(self.__dict__)
        out.window = W if flags["window"] else None
        if not flags["moe"] and flags["dense_ff"]:
            out.ff = d_ff_dense
        return out


def require_experts(g, flags) -> None:
    """What a mixture's flags ask of the sizes: k experts per token of E, and some layers with
    experts after the dense ones."""
    if flags["moe"]:
        g.require("le", k - E, "k (experts per token) must not exceed E (experts)", id="topk_within_experts")
    if flags["dense_layers"]:
        g.require("le", flags["dense_layers"] + 1 - L, "L must exceed dense_layers (some layers have experts)",
                  id="experts_after_dense_layers")
