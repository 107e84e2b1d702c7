"""Granite Speech (IBM 2025; transformers' ``GraniteSpeechForConditionalGeneration`` and
``GraniteSpeechPlusForConditionalGeneration``): a Conformer encoder (``GraniteSpeechCTCEncoder``)
and a windowed Q-Former projector (``GraniteSpeechEncoderProjector``) beside a Granite text
decoder, declared with transformers' module names.

Audio: N_aud clips per sequence, each 30 s (``GraniteSpeechFeatureExtractor`` pads nothing but a
batch to its longest clip): 3000 log-mel frames (hop 160), stacked in pairs, E = 1500 rows of
input_dim. The encoder: input_linear (input_dim -> d_a), L_a Conformer blocks (half-step
feed-forward, attention, convolution module, half-step feed-forward, post LayerNorm) and, after
block L_a // 2, the CTC heads (out, a softmax, out_mid) added back. Attention runs in blocks of
context_size positions (the last padded with zeros, its queries, keys and values projected too):
scores Q·Kᵀ plus Shaw's relative-position scores Q·R (R the (c, c, dim_head) table of the
embedded distances), then A·V; to_out reads the E unpadded rows. The projector pads the E rows to
whole windows of window_size, reads each window with n_q learned queries through the BLIP-2
Q-Former (its first self-attention over the single set of queries, a batch of one, then broadcast
against every window in the first cross-attention) and maps the queries to d: ⌈E/window⌉·n_q audio
tokens a clip (300 for the defaults, 10 a second); the decoder's T counts them.
"""

from __future__ import annotations

import math
from functools import partial

import sympy

from ... import ops
from ...core.symbols import B, L_a, N_aud, T, d, d_a
from ...graph import roles as R
from .attention import AttentionSpec, Projections, attention
from .encoder_layers import activation
from .vlm import with_encoder

AUDIO_PREFIXES = ("encoder/", "projector/", "merge_audio_tokens", "input_features")

#: encoder rows a second (100 log-mel frames stacked in pairs) and the seconds of a clip
ROWS_PER_SECOND, CLIP_SECONDS = 50, 30
I = sympy.Integer


def clip_sizes(flags) -> dict:
    """One clip's rows E, attention blocks, projector windows and audio tokens."""
    E, c, w = ROWS_PER_SECOND * CLIP_SECONDS, flags["audio_context"], flags["qformer_window"]
    blocks, windows = math.ceil(E / c), math.ceil(E / w)
    return dict(E=E, c=c, blocks=blocks, pad=blocks * c - E, w=w, windows=windows, wpad=windows * w - E,
                tokens=windows * flags["qformer_queries"])


def _ffn(g, x, path, flags):
    m = I(flags["audio_ff_mult"])
    a = g.op(f"{path}/pre_norm", ops.LayerNorm(d_a), x, role=R.FFN_NORM, label="LayerNorm_ff")
    a = g.op(f"{path}/up_proj", ops.Linear(d_a, m * d_a, bias=True), a, role=R.FFN_UP, label="up_proj")
    a = g.op(f"{path}/silu", ops.SiLU(), a, role=R.FFN_ACT, label="SiLU")
    a = g.op(f"{path}/down_proj", ops.Linear(m * d_a, d_a, bias=True), a, role=R.FFN_DOWN, label="down_proj")
    a = g.op(f"{path}/half", ops.Scale(sympy.Rational(1, 2)), a, role=R.RESIDUAL_SCALE, label="× 1/2")
    return g.op(f"{path}/add", ops.Add(), x, a, role=R.FFN_RESIDUAL, label="X + ff/2")


def _heads(g, x, name, rows, flags, role):
    hd, dh = I(flags["audio_heads"]), I(flags["audio_head_dim"])
    x = g.op(f"attn/{name}_blocks", ops.Regroup(rows, hd * dh), x, role=R.AUDIO_TRANSPOSE, label=f"{name} in blocks")
    return g.op(f"attn/{name}_heads", ops.SplitHeads(hd, dh), x, role=role, label=f"{name} heads")


def _attention(g, x, flags, c, dists):
    hd, dh = I(flags["audio_heads"]), I(flags["audio_head_dim"])
    inner, rows = hd * dh, B * N_aud * c["blocks"]
    a = g.op("attn/pre_norm", ops.LayerNorm(d_a), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")
    if c["pad"]:
        a = g.op("attn/pad", ops.PadRows(I(c["pad"])), a, role=R.AUDIO_TRANSPOSE, label="pad to whole blocks")
    q = g.op("attn/to_q", ops.Linear(d_a, inner, bias=False), a, role=R.QUERY, label="to_q")
    kv = g.op("attn/to_kv", ops.Linear(d_a, 2 * inner, bias=False), a, role=R.QKV, label="to_kv")
    k = g.op("attn/k", ops.Slice(0, inner), kv, role=R.KEY, label="K")
    v = g.op("attn/v", ops.Slice(inner, inner), kv, role=R.VALUE, label="V")
    q, k, v = (_heads(g, t, n, rows, flags, role) for t, n, role in
               ((q, "q", R.QUERY_HEADS), (k, "k", R.KEY_HEADS), (v, "v", R.VALUE_HEADS)))   # (B·N·n_b, h, c, dh)
    rel = g.op("attn/rel_pos_emb", ops.Embedding(I(2 * flags["audio_max_pos"] + 1), dh), dists,
               role=R.RELATIVE_BIAS, label="relative distances embedded")                    # (1, c, c, dh)
    pos = g.op("attn/pos_attn", ops.RelPositionScores(), q, rel, role=R.POSITION_BIAS, label="Q·R")
    scale = ops.Scale(1 / sympy.sqrt(dh))
    pos = g.op("attn/pos_scale", scale, pos, role=R.SCALE, label="× 1/√dh")
    s = g.op("attn/scores", ops.Matmul("attention_scores", transpose_b=True), q, k, role=R.SCORES, label="S = Q Kᵀ")
    s = g.op("attn/scale", scale, s, role=R.SCALE, label="× 1/√dh")
    s = g.op("attn/position_bias", ops.Add(), s, pos, role=R.POSITION_BIAS, label="S + Q·R")
    p = g.op("attn/softmax", ops.Softmax(), s, role=R.SOFTMAX, label="A = softmax(S)")
    z = g.op("attn/values", ops.Matmul("attention_values"), p, v, role=R.VALUES, label="Z = A V")
    z = g.op("attn/merge", ops.MergeHeads(), z, role=R.MERGE, label="Z merged")            # (B·N·n_b, c, inner)
    z = g.op("attn/unblock", ops.Regroup(B * N_aud, inner), z, role=R.AUDIO_TRANSPOSE, label="blocks joined")
    if c["pad"]:
        z = g.op("attn/unpad", ops.PadRows(I(-c["pad"])), z, role=R.AUDIO_TRANSPOSE, label="padding dropped")
    o = g.op("attn/to_out", ops.Linear(inner, d_a, bias=True), z, role=R.OUT, label="to_out")
    return g.op("attn/add", ops.Add(), x, o, role=R.ATTENTION_RESIDUAL, label="X + attn_out")


def _conv(g, x, flags):
    e, k = I(flags["audio_conv_expansion"]) * d_a, I(flags["audio_conv_kernel"])
    a = g.op("conv/norm", ops.LayerNorm(d_a), x, role=R.FFN_NORM, label="LayerNorm_conv")
    a = g.op("conv/channels_first", ops.ChannelsLast(), a, role=R.AUDIO_TRANSPOSE, label="channels first")
    a = g.op("conv/up_conv", ops.Conv1d(d_a, 2 * e, I(1)), a, role=R.AUDIO_CONV, label="up_conv 1×1")
    a = g.op("conv/glu", ops.GLU(), a, role=R.AUDIO_ACT, label="GLU")
    a = g.op("conv/depth_conv/conv", ops.DepthwiseConv1d(e, k), a, role=R.AUDIO_CONV, label="depthwise conv")
    a = g.op("conv/batch_norm", ops.BatchNorm1d(e), a, role=R.FFN_NORM, label="BatchNorm")
    a = g.op("conv/silu", ops.SiLU(), a, role=R.AUDIO_ACT, label="SiLU")
    a = g.op("conv/down_conv", ops.Conv1d(e, d_a, I(1)), a, role=R.AUDIO_CONV, label="down_conv 1×1")
    a = g.op("conv/channels_last", ops.ChannelsLast(), a, role=R.AUDIO_TRANSPOSE, label="channels last")
    return g.op("conv/add", ops.Add(), x, a, role=R.FFN_RESIDUAL, label="X + conv_out")


def _block(g, x, flags, c, dists):
    x = _ffn(g, x, "ff1", flags)
    x = _attention(g, x, flags, c, dists)
    x = _conv(g, x, flags)
    x = _ffn(g, x, "ff2", flags)
    return g.op("post_norm", ops.LayerNorm(d_a), x, role=R.FINAL_NORM, label="post_norm")


def _encoder(g, flags, c):
    E = I(c["E"])
    x = g.input("input_features", (B * N_aud, E, I(flags["audio_input_dim"])), dtype="act", role=R.AUDIO,
                label="stacked log-mel frames")                                              # (B·N, E, input_dim)
    dists = g.input("encoder/attention_dists", (sympy.Min(1, B * N_aud), I(c["c"]), I(c["c"])), role=R.EXTRA_IDS,
                    label="relative distances (a buffer)")                                    # (1, c, c)
    x = g.op("encoder/input_linear", ops.Linear(I(flags["audio_input_dim"]), d_a, bias=True), x,
             role=R.AUDIO_PROJECTOR, label="input_linear")                                    # (B·N, E, d_a)
    g.require("le", 2 - L_a, "the Conformer needs at least 2 layers (its CTC heads follow layer L_a // 2)",
              id="conformer_two_layers")
    lower = sympy.floor(L_a / 2)
    with g.repeat("encoder/layers", lower, label="Conformer block", carry=x, role=R.STACK, length=E):
        x = _block(g, x, flags, c, dists)
    o = I(flags["audio_ctc_dim"])
    m = g.op("encoder/out", ops.Linear(d_a, o, bias=True), x, role=R.AUDIO_PROJECTOR, label="out (CTC)")
    m = g.op("encoder/ctc_softmax", ops.Softmax(), m, role=R.AUDIO_ACT, label="softmax")
    m = g.op("encoder/out_mid", ops.Linear(o, d_a, bias=True), m, role=R.AUDIO_PROJECTOR, label="out_mid")
    x = g.op("encoder/ctc_add", ops.Add(), x, m, role=R.FFN_RESIDUAL, label="X + out_mid")
    with g.repeat("encoder/upper_layers", L_a - lower, label="Conformer block (after the CTC heads)", carry=x,
                  role=R.STACK, length=E):
        x = _block(g, x, flags, c, dists)
    return x


def _qformer_attention(g, x, flags, module):
    dq, hq = I(flags["qformer_hidden"]), I(flags["qformer_heads"])
    spec = AttentionSpec(dq, hq, dh=dq / hq, module=f"{module}/attention", causal=False,
                         names={"q": f"{module}/attention/query", "k": f"{module}/attention/key",
                                "v": f"{module}/attention/value", "o": f"{module}/output/dense"},
                         projections=Projections(bias=True, out_bias=True))
    x = g.op(f"{module}/output/add", ops.Add(), x, attention(g, x, spec), role=R.ATTENTION_RESIDUAL,
             label="Q + attn_out")
    return g.op(f"{module}/output/LayerNorm", ops.LayerNorm(dq), x, role=R.ATTENTION_NORM, label="LayerNorm_attn")


def _cross_attention(g, x, mem, flags, module, rows):
    """BLIP-2's cross-attention of the queries *x* onto the windows *mem* (rows, w, d_a); queries of
    a batch of one (the first layer's) are projected once and broadcast in the matmul."""
    dq, hq = I(flags["qformer_hidden"]), I(flags["qformer_heads"])
    a = f"{module}/attention"
    q = g.op(f"{a}/query", ops.Linear(dq, dq, bias=True), x, role=R.CROSS_QUERY, label="query")
    k = g.op(f"{a}/key", ops.Linear(d_a, dq, bias=True), mem, role=R.CROSS_KEY, label="key")
    v = g.op(f"{a}/value", ops.Linear(d_a, dq, bias=True), mem, role=R.CROSS_VALUE, label="value")
    q = g.op(f"{a}/q_heads", ops.SplitHeads(hq, dq / hq), q, role=R.CROSS_QUERY_HEADS, label="Q heads")
    k = g.op(f"{a}/k_heads", ops.SplitHeads(hq, dq / hq), k, role=R.CROSS_KEY_HEADS, label="K heads")
    v = g.op(f"{a}/v_heads", ops.SplitHeads(hq, dq / hq), v, role=R.CROSS_VALUE_HEADS, label="V heads")
    if g.graph.nodes[q]["shape"][0] != rows:
        q = g.op(f"{a}/q_expand", ops.ExpandBatch(rows), q, role=R.CROSS_QUERY_HEADS, label="Q per window")
        x = g.op(f"{module}/expand", ops.ExpandBatch(rows), x, role=R.AUDIO_TRANSPOSE, label="queries per window")
    s = g.op(f"{a}/scores", ops.Matmul("attention_scores", transpose_b=True), q, k, role=R.CROSS_SCORES,
             label="S = Q Kᵀ")                                                               # (rows, h, n_q, w)
    s = g.op(f"{a}/scale", ops.Scale(1 / sympy.sqrt(dq / hq)), s, role=R.CROSS_SCALE, label="× 1/√dh")
    p = g.op(f"{a}/softmax", ops.Softmax(), s, role=R.CROSS_SOFTMAX, label="A = softmax(S)")
    z = g.op(f"{a}/values", ops.Matmul("attention_values"), p, v, role=R.CROSS_VALUES, label="Z = A V")
    z = g.op(f"{a}/merge", ops.MergeHeads(), z, role=R.CROSS_MERGE, label="Z merged")      # (rows, n_q, d_q)
    o = g.op(f"{module}/output/dense", ops.Linear(dq, dq, bias=True), z, role=R.CROSS_OUT, label="cross_out")
    x = g.op(f"{module}/output/add", ops.Add(), x, o, role=R.CROSS_RESIDUAL, label="Q + cross_out")
    return g.op(f"{module}/output/LayerNorm", ops.LayerNorm(dq), x, role=R.CROSS_NORM, label="LayerNorm_cross")


def _projector(g, x, flags, c):
    dq, ffq, nq = I(flags["qformer_hidden"]), I(flags["qformer_ffn"]), I(flags["qformer_queries"])
    rows = B * N_aud * c["windows"]
    if c["wpad"]:
        x = g.op("projector/pad", ops.PadRows(I(c["wpad"])), x, role=R.AUDIO_TRANSPOSE, label="pad to whole windows")
    mem = g.op("projector/windows", ops.Regroup(rows, d_a), x, role=R.AUDIO_TRANSPOSE,
               label="windows")                                                               # (B·N·n_w, w, d_a)
    # one set of queries a forward (transformers' query, a batch of one), run where any clip is
    slots = g.input("projector/query_slots", (sympy.Min(1, B * N_aud), nq), role=R.EXTRA_IDS, label="query slots")
    q = g.op("projector/query", ops.Embedding(nq, dq), slots, role=R.EXTRA_EMBEDDING, label="learned queries")
    q = g.op("projector/qformer/layernorm", ops.LayerNorm(dq), q, role=R.EMBEDDING_NORM, label="LayerNorm_emb")
    act = activation(flags["qformer_activation"])
    for i in range(flags["qformer_layers"]):
        p = f"projector/qformer/encoder/layer/{i}"
        q = _qformer_attention(g, q, flags, f"{p}/attention")
        if i % flags["qformer_cross_every"] == 0:
            q = _cross_attention(g, q, mem, flags, f"{p}/crossattention", rows)
        f = g.op(f"{p}/intermediate_query/dense", ops.Linear(dq, ffq, bias=True), q, role=R.FFN_UP, label="up")
        f = g.op(f"{p}/intermediate_query/act", act, f, role=R.FFN_ACT, label="act")
        f = g.op(f"{p}/output_query/dense", ops.Linear(ffq, dq, bias=True), f, role=R.FFN_DOWN, label="down")
        q = g.op(f"{p}/output_query/add", ops.Add(), q, f, role=R.FFN_RESIDUAL, label="Q + ffn_out")
        q = g.op(f"{p}/output_query/LayerNorm", ops.LayerNorm(dq), q, role=R.FFN_NORM, label="LayerNorm_ffn")
    q = g.op("projector/rows", ops.Regroup(B * N_aud, dq), q, role=R.AUDIO_TRANSPOSE, label="windows joined")
    return g.op("projector/linear", ops.Linear(dq, d, bias=True), q, role=R.AUDIO_PROJECTOR,
                label="linear")                                                               # (B·N, n_w·n_q, d)


def _audio(g, x, flags):
    c = clip_sizes(flags)
    feats = _projector(g, _encoder(g, flags, c), flags, c)
    g.require("le", N_aud * c["tokens"] - T, f"T must count the N_aud clips' audio tokens (N_aud·{c['tokens']})",
              id="audio_tokens_within_sequence")
    return g.op("merge_audio_tokens", ops.MergeImageTokens(), x, feats, role=R.IMAGE_MERGE,
                label="merge audio features")                                                 # (B, T, d)


def build(flags, bound, name="granite_speech", labels=None):
    """A Granite text decoder (the decoder's flags) with Granite Speech's encoder and projector beside it
    (held where transformers cannot run it on audio: ``audio_runs``)."""
    if not flags["audio_runs"]:
        from .granite_speech_held import tower
        return with_encoder(flags, bound, name, labels, partial(tower, flags=flags), AUDIO_PREFIXES)
    return with_encoder(flags, bound, name, labels, partial(_audio, flags=flags), AUDIO_PREFIXES)
