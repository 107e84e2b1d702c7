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
from .attention import AttentionSpec, Projections, attention
from .ffn import FFNSpec, ffn
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
# encoders run as causal LMs with more parts (families/encoder_causal.py)
NAMES["roformer"] = {**NAMES["electra"], "pos": "encoder/embed_positions", "transform": "cls/predictions/transform/dense",
                     "transform_act": "cls/predictions/transform/transform_act_fn",
                     "transform_norm": "cls/predictions/transform/LayerNorm", "decoder": "cls/predictions/decoder"}
NAMES["rembert"] = {**NAMES["bert"], "project": "encoder/embedding_hidden_mapping_in",
                    "transform": "cls/predictions/dense", "transform_act": "cls/predictions/activation",
                    "transform_norm": "cls/predictions/LayerNorm"}
NAMES["roc_bert"] = {**NAMES["bert"], "shape": "embeddings/shape_embed", "pron": "embeddings/pronunciation_embed",
                     "map": "embeddings/map_inputs_layer"}
NAMES["xmod"] = {**NAMES["roberta"], "adapters": "output/adapter_modules", "adapter_norm": "output/adapter_layer_norm"}
NAMES["big_bird"] = dict(NAMES["bert"])
NAMES["xlm"] = dict(
    word="transformer/embeddings", pos="transformer/position_embeddings", type=None,
    emb_norm="transformer/layer_norm_emb", langs="transformer/lang_embeddings", stack="transformer/layer",
    attn="attentions", q="attentions/q_lin", k="attentions/k_lin", v="attentions/v_lin", o="attentions/out_lin",
    attn_res="attentions/add", attn_norm="layer_norm1", up="ffns/lin1", act="ffns/act", down="ffns/lin2",
    ffn_res="ffns/add", ffn_norm="layer_norm2", decoder="pred_layer/proj", pooler=None, pooler_act=None)
#: families whose positions transformers derives from the token ids (RoBERTa's padding offset)
_POSITIONS_FROM_IDS = {"roberta", "xlm_roberta_xl", "roberta_prelayernorm", "xmod"}

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
    rotary = flags.get("positions", "learned") == "rotary"
    ids = g.input("input_ids", (B, T), label="input ids", role=R.TOKENS)                    # (B, T)
    x = g.op(N["word"], ops.Embedding(V, e), ids, role=R.TOKEN_EMBEDDING, label="tok_emb")  # (B, T, e)
    if flags.get("embed_scale"):  # BigBird's rescale_embeddings: the token embeddings × √d
        x = g.op("embeddings/scale", ops.Scale(sympy.sqrt(d)), x, role=R.EMBEDDING_SCALE, label="tok_emb × √d")
    if flags.get("extra_embeds"):
        x = _extra_embeddings(g, flags, N, ids, x, e)                                       # (B, T, e)
    if flags.get("held_langs"):  # XLM's language embeddings: added only when langs are passed
        g.op(N["langs"], ops.Held(ops.Embedding(sympy.Integer(flags["held_langs"]), e), (B, T)),
             role=R.HELD_EMBEDDING, label="language embedding (not run)")
    if flags["type_vocab"] and N["type"]:
        tt = g.input("token_type_ids", (B, T), label="token types", role=R.TOKEN_TYPES)       # (B, T)
        te = g.op(N["type"], ops.Embedding(sympy.Integer(flags["type_vocab"]), e), tt,
                  role=R.TOKEN_TYPE_EMBEDDING, label="type_emb")                              # (B, T, e)
        x = g.op("embeddings/add_token_type", ops.Add(), x, te, role=R.EMBEDDING_ADD, label="tok + type")
    # transformers slices BERT's and DistilBERT's positions from a buffer; RoBERTa derives them from the ids
    if not rotary:
        pos_ids = "batch" if name in _POSITIONS_FROM_IDS else "buffer"
        pos = g.op(N["pos"], ops.PositionEmbedding(T_max, e, offset=flags["pos_offset"] or 0, ids=pos_ids), ids,
                   role=R.POSITION_EMBEDDING, label="pos_emb")                                # (T, e)
        x = g.op("embeddings/add", ops.Add(), x, pos, role=R.EMBEDDING_ADD, label="X0")       # (B, T, e)
    if flags.get("embed_norm", True):
        x = g.op(N["emb_norm"], ops.LayerNorm(e), x, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    if drop:
        x = g.op("embeddings/dropout", ops.Dropout(), x, role=R.DROPOUT)
    if flags.get("embed_dim") or flags.get("embed_project"):
        x = g.op(N["project"], ops.Linear(e, d), x, role=R.PROJECT_IN, label="project in")  # (B, T, d)
    table = None
    if rotary:  # RoFormer: sin | cos of each position in a (T_max, d_head) parameter, RoPE on Q and K
        table = g.op(N["pos"], ops.PositionEmbedding(T_max, dh), ids, role=R.ROTARY_TABLE,
                     label="sin | cos (a parameter table)")                                  # (T, d_head)
    if flags.get("block_sparse"):
        g.require("le", T - sympy.Integer(flags["block_sparse"]),
                  f"T must not exceed {flags['block_sparse']} = (5 + 2 num_random_blocks) block_size: past it "
                  "transformers runs block-sparse attention, which is not modelled", id="full_attention_length")

    attn = AttentionSpec(d, h, dh=dh, module=N["attn"], names={"q": N["q"], "k": N["k"], "v": N["v"], "o": N["o"]},
                         causal=False, dropout=drop, rotary_interleave=rotary,
                         projections=Projections(bias=flags.get("qkv_bias", True), out_bias=True))
    mlp = FFNSpec(d, ff, activation(flags["activation"]), bias=True, dropout=drop,
                  names={"up": N["up"], "act": N["act"], "down": N["down"], "dropout": N["down"] + "_dropout"})
    with g.repeat(N["stack"], L, label="encoder layer", carry=x, role=R.STACK, length=T):
        a = x
        if pre:
            a = g.op(N["attn_pre"], ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        o = attention(g, a, attn, rotary=table)
        x = g.op(N["attn_res"], ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")
        a = x
        if pre:
            a = g.op(N["ffn_pre"], ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")
        else:
            x = a = g.op(N["attn_norm"], ops.LayerNorm(d), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
        f = ffn(g, a, mlp)
        x = g.op(N["ffn_res"], ops.Add(), x, f, role=R.FFN_RESIDUAL, label="X + ffn_out")
        if flags.get("adapters"):
            x = _language_adapter(g, flags, N, x)
        elif not pre:
            x = g.op(N["ffn_norm"], ops.LayerNorm(d), x, role=R.FFN_NORM, label="LayerNorm_ffn")  # (B, T, d)
    if pre:
        x = g.op(N["final_norm"], ops.LayerNorm(d), x, role=R.FINAL_NORM, label="LayerNorm_final")

    if flags.get("pooler"):  # BigBirdModel runs its pooler under the causal-LM head too (its output unused)
        c = g.op("pooler/first_token", ops.FirstToken(), x, role=R.POOLED_TOKEN, label="X[:, 0]")  # (B, d)
        c = g.op(N["pooler"], ops.Linear(d, d), c, role=R.POOLER, label="pooler")              # (B, d)
        g.op(N["pooler_act"], ops.Tanh(), c, role=R.POOLER_ACT, label="tanh(pooler)")         # (B, d)
    head = flags["head"]
    loss = ""
    if head == "mlm":
        # the transform's width: the embeddings' (e), or RemBERT's output_embedding_size
        o_w = sympy.Integer(flags["head_dim"]) if flags.get("head_dim") else e
        tied = flags.get("tied", True)
        if tied and sympy.expand(o_w - e) != 0:
            from ...core.errors import SymgptError

            raise SymgptError(f"a decoder of width {o_w} cannot be tied to token embeddings of width {e}")
        t = g.op(N["transform"], ops.Linear(d, o_w), x, role=R.HEAD_TRANSFORM, label="transform")  # (B, T, o)
        t = g.op(N["transform_act"], activation(flags["head_activation"] or flags["activation"]), t,
                 role=R.HEAD_TRANSFORM_ACT, label="act(transform)")
        t = g.op(N["transform_norm"], ops.LayerNorm(o_w), t, role=R.HEAD_TRANSFORM_NORM, label="LayerNorm_head")
        out = g.op(N["decoder"], ops.Linear(o_w, V, bias=True, tag="lm_head"), t,
                   tie={"weight": g.param(N["word"])} if tied else None, role=R.HEAD, label="logits")  # (B, T, V)
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


def _extra_embeddings(g, flags, N, ids, x, e):
    """RoCBert's shape and pronunciation embeddings (ids all zeros when not given), concatenated
    after the token embeddings (shape first) and mapped to *e* by ``map_inputs_layer``; a table
    its config disables is held and not run."""
    parts, width = [x], e
    for key in ("shape", "pron"):
        rows, dim = sympy.Integer(flags[f"{key}_vocab"]), sympy.Integer(flags[f"{key}_dim"])
        if not flags.get(f"{key}_run", True):
            g.op(N[key], ops.Held(ops.Embedding(rows, dim), (B, T)), role=R.HELD_EMBEDDING,
                 label=f"{key} embedding (not run)")
            continue
        xid = g.input(f"input_{key}_ids", (B, T), label=f"{key} ids", role=R.EXTRA_IDS)       # (B, T)
        parts.append(g.op(N[key], ops.Embedding(rows, dim), xid, role=R.EXTRA_EMBEDDING,
                          label=f"{key}_emb"))                                                # (B, T, dim)
        width = width + dim
    if len(parts) > 1:
        x = g.op("embeddings/concat", ops.Concat(), *parts, role=R.EMBEDDING_CONCAT, label="concat")
    return g.op(N["map"], ops.Linear(width, e), x, role=R.PROJECT_IN, label="map inputs")    # (B, T, e)


def _language_adapter(g, flags, N, x):
    """X-MOD's language adapter after the FFN's residual add (transformers' ``XmodOutput``): a
    LayerNorm (the output's own, reused; or one of its own; or none), the adapter of the batch's
    language (dense d -> d/r, activation, dense d/r -> d) and its residual add (from the normed or
    the un-normed input), then the output's LayerNorm. Every token runs exactly one adapter, so
    the work does not depend on which languages a batch holds; the other languages' adapters are
    held, not run."""
    m = sympy.Integer(flags["adapter_dim"])
    kind = flags.get("adapter_norm", "reuse")
    y = x
    final = None
    if kind == "reuse":
        final = y = g.op(N["ffn_norm"], ops.LayerNorm(d), x, role=R.ADAPTER_NORM, label="LayerNorm_ffn (adapter)")
    elif kind == "own":
        y = g.op(N["adapter_norm"], ops.LayerNorm(d), x, role=R.ADAPTER_NORM, label="LayerNorm_adapter")
    residual = y if flags.get("adapter_ln_first", True) else x
    base = N["adapters"]
    a = g.op(f"{base}/0/dense1", ops.Linear(d, m), y, role=R.ADAPTER_DOWN, label="adapter down")  # (B, T, d/r)
    a = g.op(f"{base}/0/adapter_act_fn", activation(flags["activation"]), a, role=R.ADAPTER_ACT,
             label="act(adapter)")
    a = g.op(f"{base}/0/dense2", ops.Linear(m, d), a, role=R.ADAPTER_UP, label="adapter up")      # (B, T, d)
    for i in range(1, int(flags["adapters"])):
        for n, lin, width in (("dense1", ops.Linear(d, m), d), ("dense2", ops.Linear(m, d), m)):
            g.op(f"{base}/{i}/{n}", ops.Held(lin, (B, T, width)), role=R.HELD_ADAPTER,
                 label=f"adapter {i} {n} (not run)")
    x = g.op(f"{base}/add", ops.Add(), a, residual, role=R.ADAPTER_RESIDUAL, label="adapter + residual")
    tie = {"weight": g.param(final, "weight"), "bias": g.param(final, "bias")} if final else None
    return g.op(N["ffn_norm"] + ("_again" if final else ""), ops.LayerNorm(d), x, tie=tie, role=R.FFN_NORM,
                label="LayerNorm_ffn")                                                          # (B, T, d)
