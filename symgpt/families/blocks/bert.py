"""BERT-style encoders: BERT, RoBERTa, DistilBERT (Devlin et al. 2019; Liu et al. 2019; Sanh et al.
2019), declared on the op catalog with transformers' module names and roles.

Token (+ token-type) + learned position embeddings, a LayerNorm; L post-norm blocks of
bidirectional self-attention (no causal mask) and a GELU MLP; then the head the ``head`` flag
names: ``mlm`` (the masked-LM head: dense d -> d, activation, LayerNorm, a decoder tied to the
token embedding with a bias of its own, the loss over all T positions), ``pooler`` (dense d -> d and
tanh on the first token, as ``BertModel`` has) or ``none`` (the last hidden states). One sequence
length, T.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...graph import roles as R
from ...graph.arch import Builder
from ...core.symbols import B, L, T, T_max, V, d, d_ff, h
from .attention import attention
from .ffn import ffn
from .encoder_layers import activation

#: model type -> the node names of its transformers source (``.`` -> ``/``, layer index dropped)
NAMES = {
    "bert": dict(
        word="embeddings/word_embeddings", pos="embeddings/position_embeddings",
        type="embeddings/token_type_embeddings", emb_norm="embeddings/LayerNorm",
        stack="encoder/layer", attn="attention/self", q="attention/self/query", k="attention/self/key",
        v="attention/self/value", o="attention/output/dense", attn_res="attention/output/add",
        attn_norm="attention/output/LayerNorm", up="intermediate/dense",
        act="intermediate/intermediate_act_fn", down="output/dense", ffn_res="output/add",
        ffn_norm="output/LayerNorm", transform="cls/predictions/transform/dense",
        transform_act="cls/predictions/transform/transform_act_fn",
        transform_norm="cls/predictions/transform/LayerNorm", decoder="cls/predictions/decoder",
        pooler="pooler/dense", pooler_act="pooler/activation"),
    "distilbert": dict(
        word="embeddings/word_embeddings", pos="embeddings/position_embeddings", type=None,
        emb_norm="embeddings/LayerNorm", stack="transformer/layer", attn="attention",
        q="attention/q_lin", k="attention/k_lin", v="attention/v_lin", o="attention/out_lin",
        attn_res="attention/add", attn_norm="sa_layer_norm", up="ffn/lin1", act="ffn/activation",
        down="ffn/lin2", ffn_res="ffn/add", ffn_norm="output_layer_norm", transform="vocab_transform",
        transform_act="activation", transform_norm="vocab_layer_norm", decoder="vocab_projector",
        pooler=None, pooler_act=None),
}
NAMES["roberta"] = {**NAMES["bert"], "transform": "lm_head/dense", "transform_act": "lm_head/gelu",
                    "transform_norm": "lm_head/layer_norm", "decoder": "lm_head/decoder"}
# encoder families run as causal LMs (families/bert_causal.py): pre-norm blocks name their norms
# before each sublayer (attn_pre, ffn_pre) and the final one; ELECTRA projects narrow embeddings
NAMES["megatron_bert"] = {**NAMES["bert"], "attn_pre": "attention/ln", "ffn_pre": "ln", "final_norm": "encoder/ln"}
NAMES["xlm_roberta_xl"] = {**NAMES["roberta"], "attn_pre": "attention/self_attn_layer_norm", "ffn_pre": "LayerNorm",
                           "final_norm": "encoder/LayerNorm"}
NAMES["roberta_prelayernorm"] = {**NAMES["roberta"], "attn_pre": "attention/LayerNorm",
                                 "ffn_pre": "intermediate/LayerNorm", "final_norm": "LayerNorm"}
NAMES["electra"] = {**NAMES["bert"], "project": "embeddings_project", "transform": "generator_predictions/dense",
                    "transform_act": "generator_predictions/activation",
                    "transform_norm": "generator_predictions/LayerNorm", "decoder": "generator_lm_head"}
NAMES["bert_generation"] = {**NAMES["bert"], "type": None, "decoder": "lm_head/decoder"}
#: families whose positions transformers derives from the token ids (RoBERTa's padding offset)
_POSITIONS_FROM_IDS = {"roberta", "xlm_roberta_xl", "roberta_prelayernorm"}

def build(flags, bound, name="bert"):
    N = NAMES.get(name, NAMES["bert"])
    ff = d_ff if "d_ff" in bound else 4 * d
    dh = d / h
    drop = bool(flags["dropout"])
    g = Builder(name, declared_roles=True)
    g.require("integer", d / h, "d must be divisible by h", id="heads_divide_width")
    g.require("le", T - T_max, "T must not exceed T_max, the length of the learned position table",
              id="length_within_positions")

    # embeddings of width e (ELECTRA's embedding_size, projected to d), or d
    e = sympy.Integer(flags["embed_dim"]) if flags.get("embed_dim") else d
    pre = flags.get("norm", "post") == "pre"
    ids = g.input("input_ids", (B, T), label="input ids", role=R.TOKENS)                    # (B, T)
    x = g.op(N["word"], ops.Embedding(V, e), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")  # (B, T, e)
    if flags["type_vocab"] and N["type"]:
        tt = g.input("token_type_ids", (B, T), label="token types", role=R.TOKEN_TYPES)       # (B, T)
        te = g.op(N["type"], ops.Embedding(sympy.Integer(flags["type_vocab"]), e), tt,
                  role=R.TOKEN_TYPE_EMBEDDING, label="type_emb")                              # (B, T, e)
        x = g.op("embeddings/add_token_type", ops.Add(), x, te, role=R.EMBEDDING_ADD, label="tok + type")
    # transformers slices BERT's and DistilBERT's positions from a buffer; RoBERTa derives them from the ids
    pos_ids = "batch" if name in _POSITIONS_FROM_IDS else "buffer"
    pos = g.op(N["pos"], ops.PositionEmbedding(T_max, e, offset=flags["pos_offset"] or 0, ids=pos_ids), ids,
               role=R.POSITION_EMBEDDING, label="pos_emb")                                    # (T, e)
    x = g.op("embeddings/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="X0")           # (B, T, e)
    if flags.get("embed_norm", True):
        x = g.op(N["emb_norm"], ops.LayerNorm(e), x, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    if drop:
        x = g.op("embeddings/dropout", ops.Dropout(), x, role=R.DROPOUT)
    if flags.get("embed_dim"):
        x = g.op(N["project"], ops.Linear(e, d), x, role=R.PROJECT_IN, label="project in")  # (B, T, d)

    with g.repeat(N["stack"], L, label="encoder layer", carry=x, role=R.STACK, length=T):
        a = x
        if pre:
            a = g.op(N["attn_pre"], ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        o = attention(g, a, d_model=d, heads=h, dh=dh, module=N["attn"],
                      names={"q": N["q"], "k": N["k"], "v": N["v"], "o": N["o"]}, bias=True, causal=False,
                      dropout=drop)
        x = g.op(N["attn_res"], ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        a = x
        if pre:
            a = g.op(N["ffn_pre"], ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")
        else:
            x = a = g.op(N["attn_norm"], ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        f = ffn(g, a, d_model=d, ff=ff, act=activation(flags["activation"]), bias=True, dropout=drop,
                names={"up": N["up"], "act": N["act"], "down": N["down"], "dropout": N["down"] + "_dropout"})
        x = g.op(N["ffn_res"], ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")
        if not pre:
            x = g.op(N["ffn_norm"], ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")  # (B, T, d)
    if pre:
        x = g.op(N["final_norm"], ops.LayerNorm(d), x, role=R.FINAL_NORM, label="LayerNorm_final")

    head = flags["head"]
    loss = ""
    if head == "mlm":
        t = g.op(N["transform"], ops.Linear(d, e), x, role=R.HEAD_TRANSFORM, label="transform")  # (B, T, e)
        t = g.op(N["transform_act"], activation(flags["head_activation"] or flags["activation"]), t,
                 role=R.HEAD_TRANSFORM_ACT, label="act(transform)")
        t = g.op(N["transform_norm"], ops.LayerNorm(e), t, role=R.HEAD_TRANSFORM_NORM, label="LayerNorm_head")
        out = g.op(N["decoder"], ops.Linear(e, V, bias=True, tag="lm_head"), t,
                   tie={"weight": g.param(N["word"])}, role=R.HEAD, label="logits")          # (B, T, V)
        loss = g.op("loss", ops.CrossEntropy(), out, role=R.LOSS, label="loss")
    elif head == "lm":  # BertGenerationOnlyLMHead: the tied decoder (with a bias of its own) alone
        out = g.op(N["decoder"], ops.Linear(d, V, bias=True, tag="lm_head"), x,
                   tie={"weight": g.param(N["word"])}, role=R.HEAD, label="logits")          # (B, T, V)
        loss = g.op("loss", ops.CrossEntropy(), out, role=R.LOSS, label="loss")
    elif head == "pooler":
        if N["pooler"] is None:
            from ...core.errors import SymgptError

            raise SymgptError(f"{name} has no pooler (DistilBertModel returns the hidden states): "
                              "choose head=mlm or head=none")
        c = g.op("pooler/first_token", ops.FirstToken(), x, role=R.POOLED_TOKEN, label="X[:, 0]")  # (B, d)
        c = g.op(N["pooler"], ops.Linear(d, d), c, role=R.POOLER, label="pooler")              # (B, d)
        out = g.op(N["pooler_act"], ops.Tanh(), c, role=R.POOLER_ACT, label="tanh(pooler)")   # (B, d)
    else:
        out = x
    return g.build(output=out, loss=loss, flags=dict(flags))
