"""DeepSeek-V2 and DeepSeek-V3: multi-latent attention (MLA) and a mixture of routed and
shared experts, after a few dense layers.

The block is the generic decoder's (``decoder.py``: pre-norm RMSNorm, residuals, the FFN with
its router, routed experts, shared expert) with attention replaced by MLA, as transformers'
``DeepseekV3Attention`` computes it (DeepSeek-AI 2024, "DeepSeek-V2", Sec. 2.1):

* queries: ``q_a_proj`` (d -> q_lora_rank), its RMSNorm, ``q_b_proj`` (-> h·(nope + rope)); or
  one ``q_proj`` when ``q_lora_rank`` is unset (DeepSeek-V2-Lite); each head split into a
  no-position part (qk_nope_head_dim) and a rotary part (qk_rope_head_dim);
* keys and values: ``kv_a_proj_with_mqa`` (d -> kv_lora_rank + rope), split into the latent
  (RMSNorm-ed: what the cache holds) and one rotary key shared by every head (also cached);
  ``kv_b_proj`` (kv_lora_rank -> h·(nope + v_head_dim)) expands the latent into each head's
  key part and value; the key is the concatenation of its part and the shared rotary key.

The family (flags, reader, presets) is ``symgpt.families.deepseek``. The MLA sizes are integer flags
read from config.json (``q_lora_rank``, ``kv_lora_rank``, ``qk_nope_dim``, ``qk_rope_dim``,
``v_head_dim``), each shown as a symbol of its own bound to the flag's value (``r_q``, ``r_kv``,
``d_nope``, ``d_rope``, ``d_hv``: ``symgpt.core.symbols.FLAG_SYMBOLS``), as are ``d``, ``h``,
``L``, ``V``, ``E``, ``k`` and ``d_ff`` (the routed experts' width). The first
``dense_layers`` layers (``first_k_dense_replace``) are a stack of their own with a dense FFN of
width ``dense_ff`` (the symbol ``d_ff_dense``); the other L - dense_layers layers hold the experts. Routing groups
(``n_group``, ``topk_group``) choose experts and own no parameters; the score-correction bias of
DeepSeek-V3 is a buffer, not a parameter (transformers), so neither changes a count.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles
from ...core.errors import SymgptError
from ...graph.arch import Builder
from ...core.symbols import d, d_hv, d_nope, d_rope, h, r_kv, r_q
from .decoder import decoder_embeddings
from .decoder_flags import BuildSizes, require_experts
from .attention import AttentionSpec, OutputGate, Projections, Scores, attention
from .latent import MLA
from .decoder_layers import decoder_ffn, decoder_norm
from .stacks import layers


def _int(flags, name) -> sympy.Integer:
    v = flags[name]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise SymgptError(f"flag {name} must be a positive integer, got {v!r}")
    return sympy.Integer(v)


#: the MLA size flags and the symbols that show them (a model binds each to its flag's value)
_MLA_SYMBOLS = {"q_lora_rank": r_q, "kv_lora_rank": r_kv, "qk_nope_dim": d_nope, "qk_rope_dim": d_rope,
                "v_head_dim": d_hv}


def _size(flags, name) -> sympy.Symbol:
    """The symbol of the MLA size flag *name*, once its value is checked (a positive integer)."""
    _int(flags, name)
    return _MLA_SYMBOLS[name]


#: the generic decoder's flags the MLA block does not model: set, they refuse the build
_NOT_IN_MLA_BLOCKS = ("parallel", "post_norm", "branch_norms", "qkv_bias", "proj_bias", "dropout")


def build(flags, bound, name="deepseek_v3"):
    if flags["window"] or flags["positions"] != "rotary" or flags["fused_qkv"]:
        raise SymgptError("multi-latent attention has rotary positions, no window and no fused QKV")
    unmodelled = [f for f in _NOT_IN_MLA_BLOCKS if flags.get(f)]
    if unmodelled:
        raise SymgptError(f"flag {unmodelled[0]} is not modelled in the multi-latent attention block "
                          "(pre-norm, no Q/K/V or output-projection bias flags, no dropout layers): unset it")
    s = BuildSizes(flags, bound)
    g = Builder(name, declared_roles=True)
    require_experts(g, flags)
    x = decoder_embeddings(g, flags, s)
    # mla_nope (a flag Kimi Linear's family adds): no positions, the rotary parts not rotated
    table = None if flags.get("mla_nope") else g.op("embedding/rotary", ops.RotaryTable(_size(flags, "qk_rope_dim")),
                                                     "input_ids", label="cos, sin", role=roles.ROTARY_TABLE)
    # (2, T, rope)
    emb = x
    hidden = x = layers(g, flags, s, x, lambda g, f, s, x: _block(g, f, s, x, table))
    x = g.op("final_norm", decoder_norm(flags, d), x, label="final norm", role=roles.FINAL_NORM)  # (B, T, d)
    tie = {"weight": g.param("embedding/token")} if flags["tied"] else None
    logits = g.op("lm_head", ops.Linear(d, s.vocab, bias=False, tag="lm_head"), x, tie=tie,
                  label="logits", role=roles.HEAD)                                    # (B, T, V)
    loss = g.op("loss", ops.CrossEntropy(), logits, label="loss", role=roles.LOSS) if flags["loss"] else ""
    if flags["mtp_layers"]:
        _mtp(g, flags, s, hidden, emb, table, tie or {"weight": g.param("lm_head")})
    return g.build(output=logits, loss=loss, flags=dict(flags))


def _mtp(g, flags, s, h, emb, table, head_tie):
    """DeepSeek-V3's multi-token prediction (Sec. 2.2): module k joins the previous depth's hidden
    state and the embedding of the token k ahead (the same lookup, shifted: one tensor) through
    two RMSNorms and a projection 2d -> d, runs one MoE layer, and predicts through the shared
    output head (its own final norm, the main LM head's matrix). A stack of ``mtp_layers``."""
    f = {**flags, "moe": True}
    with g.repeat("mtp", sympy.Integer(flags["mtp_layers"]), label="MTP module", carry=h, role=roles.STACK):
        hn = g.op("hnorm", decoder_norm(f, d), h, label="norm(h)", role=roles.MTP_NORM)    # (B, T, d)
        en = g.op("enorm", decoder_norm(f, d), emb, label="norm(emb)", role=roles.MTP_NORM)  # (B, T, d)
        x = g.op("concat", ops.Concat(), en, hn, label="[norm(emb); norm(h)]",
                 role=roles.MTP_CONCAT)                                                 # (B, T, 2d)
        x = g.op("eh_proj", ops.Linear(2 * d, d, bias=False), x, label="M h'",
                 role=roles.MTP_PROJ)                                                   # (B, T, d)
        h = _block(g, f, s.layer(f), x, table)                                          # (B, T, d)
        y = g.op("shared_head/norm", decoder_norm(f, d), h, label="norm", role=roles.FINAL_NORM)
        y = g.op("shared_head/head", ops.Linear(d, s.vocab, bias=False, tag="lm_head"), y, tie=head_tie,
                 label="MTP logits", role=roles.HEAD)                                   # (B, T, V)
        if flags["loss"]:
            g.op("loss", ops.CrossEntropy(), y, label="MTP loss", role=roles.LOSS)
    return h


def _block(g, flags, s, x, table):
    a = g.op("norms/attention", decoder_norm(flags, d), x, label="norm_attn", role=roles.ATTENTION_NORM)
    if flags.get("gated_norm_rank"):
        a = _norm_gate(g, flags, a, "norms/attention_gate")                           # (B, T, d)
    if flags.get("mixer") == "kda":  # Kimi Linear's linear-attention layers (stacks.py: linear_layers)
        from .kda import kda
        o = kda(g, flags, s, a)                                                       # (B, T, d)
    else:
        o = mla(g, flags, a, table)                                                   # (B, T, d)
    x = g.op("attention/residual", ops.Add(), x, o, label="X + attn_out",
             role=roles.ATTENTION_RESIDUAL)                                           # (B, T, d)
    f = g.op("norms/ffn", decoder_norm(flags, d), x, label="norm_ffn", role=roles.FFN_NORM)  # (B, T, d)
    if flags.get("gated_norm_rank") and flags["moe"]:  # A.X-K2 gates the FFN norm of expert layers only
        f = _norm_gate(g, flags, f, "norms/ffn_gate")                                 # (B, T, d)
    f = decoder_ffn(g, flags, s, f)                                                        # (B, T, d)
    if flags["moe"] and flags.get("post_moe_norm"):  # A.X K1: a norm of the mixture's output
        f = g.op("ffn/post_mlp_layernorm", decoder_norm(flags, d), f, label="norm(ffn_out)",
                 role=roles.POST_FFN_NORM)                                                 # (B, T, d)
    return g.op("ffn/residual", ops.Add(), x, f, label="X + ffn_out", role=roles.FFN_RESIDUAL)


def mla(g, flags, a, table):
    """Multi-latent attention on the normed input *a* (B, T, d) -> (B, T, d)."""
    nope, rope, vd, c = (_size(flags, n) for n in ("qk_nope_dim", "qk_rope_dim", "v_head_dim", "kv_lora_rank"))
    q_rank = _size(flags, "q_lora_rank") if flags["q_lora_rank"] else None
    sizes = MLA(q_rank, c, nope, rope, vd, complex_rope=bool(flags["complex_rope"]),
                q_gate=bool(flags.get("q_gate")))
    sparse_index = None
    if flags.get("index_heads"):  # DeepSeek Sparse Attention (blocks/dsa.py)
        from .dsa import indexer
        sparse_index = indexer(flags, table)
    # mla_head_gate (a flag Ling 3's family adds): sigmoid(x·W_g), one gate per head, before o_proj
    gate = OutputGate("sigmoid", per_head=True) if flags.get("mla_head_gate") else OutputGate()
    spec = AttentionSpec(d, h, mla=sizes, projections=Projections(bias=bool(flags["attention_bias"])),
                         scores=Scores(label="S / √d_qk"), sparse_index=sparse_index, gate=gate)
    return attention(g, a, spec, rotary=table)                                        # (B, T, d)




def _norm_gate(g, flags, y, name):
    """A.X-K2's gated RMSNorm after its norm y (transformers' ``AXK2GatedRMSNorm``):
    y ⊙ sigmoid(fc2(silu(fc1(y)))), fc1: d -> gated_norm_rank, fc2 back, no biases."""
    r = _int(flags, "gated_norm_rank")
    u = g.op(f"{name}/fc1", ops.Linear(d, r, bias=False), y, label="fc1", role=roles.NORM_GATE_UP)   # (B, T, r)
    u = g.op(f"{name}/act", ops.SiLU(), u, label="SiLU", role=roles.NORM_GATE_ACT)
    u = g.op(f"{name}/fc2", ops.Linear(r, d, bias=False), u, label="fc2", role=roles.NORM_GATE_DOWN)  # (B, T, d)
    u = g.op(f"{name}/sigmoid", ops.Sigmoid(), u, label="σ", role=roles.NORM_GATE_SIGMOID)
    return g.op(f"{name}/mul", ops.Mul(), y, u, label="y ⊙ σ", role=roles.NORM_GATE_MUL)
