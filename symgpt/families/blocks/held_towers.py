"""A text decoder of another family with a tower beside it whose parameters are held (``ops.Held``:
counted, not run), for ``families/held_towers.py``. Each tower is declared at transformers'
module paths:

- ``ovis2`` (``Ovis2VisionModel`` and ``Ovis2Model.visual_embeddings_table``): the patch Conv2d
  with bias (C_img·P²·d_v + d_v), a position table (n_pos·d_v), an RMSNorm; L_v layers (q/k/v/out
  of d_v with qkv_bias, RMSNorms rms_norm1/2, a SwiGLU MLP of d_ff_v with mlp_bias); the final
  RMSNorm; head_linear (s²·d_v -> vocab_v - indicators, no bias) and head_norm (a LayerNorm of
  vocab_v - indicators); the table (vocab_v rows of the top-level hidden_size).
- ``omniasr`` (``OmniASRAudioModel`` and the projector): the feature encoder (Conv1d(1, c, k_0)
  then Conv1d(c, c, k_i), each with conv_bias and a LayerNorm of c), its LayerNorm and projection
  Linear(c, d_a); the positional Conv1d(d_a, d_a, K, groups G) with bias; L_a post-LayerNorm
  layers (q/k/v/out with biases, intermediate_dense and output_dense with biases, two LayerNorms);
  the final LayerNorm; multi_modal_projector Linear(d_a, d) with bias.
- ``fun_asr_nano`` (``FunAsrNanoEncoder`` and ``FunAsrNanoMultiModalProjector``): layer 0 reads
  width n_in (q/k/v Linear(n_in, d_a), input LayerNorm of n_in), layers 1 .. L_a-1 width d_a: q/k/v/o
  with biases, the FSMN depthwise Conv1d (d_a·K, no bias), fc1/fc2 with biases, two LayerNorms; a
  final LayerNorm on the last transcription and timestamp layers; the projector linear_1
  (d_a -> p), linear_2 (p -> d_ad) and adaptor layers (q/k/v/o, fc1/fc2, two LayerNorms, no FSMN).
- ``radio`` (``RadioModel`` of Nemotron 3 Nano Omni, its projector): patch_projection
  (C_img·P² -> d_v) and video_patch_projection (t·C_img·P² -> d_v), no biases; the position table
  (n_pos·d_v) and the class/register tokens (n_prefix·d_v); L_v layers (LayerNorms norm1, norm2;
  q/k/v with qkv_bias, o_proj with a bias; the layer scales lambda1 of d_v twice; fc1/fc2 with
  biases, or gate/up/down with biases for a SwiGLU MLP); vision_final_layernorm where built; the
  projector (an RMSNorm of its input width, linear_1 and linear_2 without biases).
- ``janus`` (``JanusModel``'s modules beside the decoder): the vision tower (patch Conv2d with bias,
  a position table, L_v layers of LayerNorms, q/k/v with attention_bias, projection_layer with a
  bias, optional Q/K LayerNorms of d_v, fc1/fc2 with biases; post_layernorm), the aligner
  (Linear(d_v, w) then depth - 1 Linear(w, w), biases); the VQ-VAE (its encoder and decoder as one
  block each, counted from vq_config by ``families/janus.py``; the codebook; the 1×1 quant_conv
  and post_quant_conv with biases); generation_embeddings (codes × code width),
  generation_aligner (Linear(code width, p) then Linear(p, p)s) and generation_head (proj_out,
  vision_head onto the codebook, biases).
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import B, C_img, L_a, L_v, N_aud, N_img, P_patch, d, d_a, d_ff_a, d_ff_v, d_v
from ...graph import roles as R
from ...graph.arch import Builder

_ONE = sympy.Integer(1)


def _held(g, path, op, width, label):
    g.op(path, ops.Held(op, (B, width)), role=R.HELD_EMBEDDING, label=f"{label} (not run)")


def _linear(g, path, n_in, n_out, bias, label=None):
    _held(g, path, ops.Linear(n_in, n_out, bias=bias), n_in, label or path.rsplit("/", 1)[-1])


def _norm(g, path, width, rms=False):
    _held(g, path, (ops.RMSNorm if rms else ops.LayerNorm)(width), width, path.rsplit("/", 1)[-1])


def _vector(g, path, width, label):
    _held(g, path, ops.ChannelBias(width), width, label)


def _int(flags, key):
    value = flags[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SymgptError(f"flag {key} must be a positive integer, got {value!r}")
    return sympy.Integer(value)


def _ovis2(g, flags):
    t = "vision_tower/transformer"
    _linear(g, f"{t}/embeddings/patch_embedding", C_img * P_patch ** 2, d_v, True, "patches (Conv2d P×P)")
    _held(g, f"{t}/embeddings/position_embedding", ops.Embedding(_int(flags, "ovis_positions"), d_v), d_v, "positions")
    _norm(g, f"{t}/embeddings/rms_norm", d_v, rms=True)
    qkv, mlp = bool(flags["ovis_qkv_bias"]), bool(flags["ovis_mlp_bias"])
    with g.repeat(f"{t}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=_ONE):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"attention/{n}", d_v, d_v, qkv)
        for n in ("gate_proj", "up_proj"):
            _linear(g, f"ffn/{n}", d_v, d_ff_v, mlp)
        _linear(g, "ffn/down_proj", d_ff_v, d_v, mlp)
        _norm(g, "rms_norm1", d_v, rms=True)
        _norm(g, "rms_norm2", d_v, rms=True)
    _norm(g, f"{t}/rms_norm", d_v, rms=True)
    stride, vocab = _int(flags, "ovis_stride"), _int(flags, "ovis_visual_vocab")
    words = vocab - _int(flags, "ovis_indicators")
    _linear(g, "vision_tower/head_linear", stride ** 2 * d_v, words, False)
    _norm(g, "vision_tower/head_norm", words)
    width = _int(flags, "ovis_table_width")
    _held(g, "visual_embeddings_table", ops.Embedding(vocab, width), width, "visual embedding table")
    return N_img, "images", "vision tower"


def _encoder_layer(g, n_in, da, ff, fsmn=None, at=""):
    """A FunAsrNanoEncoderLayer (q/k/v read *n_in*; an FSMN of kernel *fsmn* where given), its paths
    under *at*."""
    for n in ("q_proj", "k_proj", "v_proj"):
        _linear(g, f"{at}self_attn/{n}", n_in, da, True)
    _linear(g, f"{at}self_attn/o_proj", da, da, True)
    if fsmn is not None:
        _held(g, f"{at}self_attn/fsmn/conv", ops.Linear(fsmn, da, bias=False), fsmn, "FSMN depthwise Conv1d")
    _linear(g, f"{at}mlp/fc1", da, ff, True)
    _linear(g, f"{at}mlp/fc2", ff, da, True)
    _norm(g, f"{at}input_layernorm", n_in)
    _norm(g, f"{at}post_attention_layernorm", da)


def _fun_asr_nano(g, flags):
    k = _int(flags, "audio_fsmn_kernel")
    _encoder_layer(g, _int(flags, "audio_in"), d_a, d_ff_a, fsmn=k, at="audio_tower/first_layer/")
    with g.repeat("audio_tower/layers", L_a - 1, label="audio layer (held)", role=R.STACK, length=_ONE):
        _encoder_layer(g, d_a, d_a, d_ff_a, fsmn=k)
    with g.repeat("audio_tower/final_layernorm", _int(flags, "audio_final_norms"), label="final LayerNorm (held)",
                  role=R.STACK, length=_ONE):
        _norm(g, "final_layernorm", d_a)
    p, da = _int(flags, "adaptor_proj"), _int(flags, "adaptor_d")
    _linear(g, "multi_modal_projector/linear_1", d_a, p, True)
    _linear(g, "multi_modal_projector/linear_2", p, da, True)
    if flags["adaptor_layers"]:
        with g.repeat("multi_modal_projector/layers", _int(flags, "adaptor_layers"), label="adaptor layer (held)",
                      role=R.STACK, length=_ONE):
            _encoder_layer(g, da, da, _int(flags, "adaptor_ff"))
    return N_aud, "audio input", "audio encoder"


def _omniasr(g, flags):
    c, bias = _int(flags, "audio_conv_channels"), bool(flags["audio_conv_bias"])
    s = "audio_tower/subsampling"
    _linear(g, f"{s}/conv_layers/0/conv", _int(flags, "audio_conv_kernel0"), c, bias, "Conv1d(1, c, k_0)")
    _norm(g, f"{s}/conv_layers/0/layer_norm", c)
    rest = _int(flags, "audio_conv_layers") - 1
    if rest > 0:
        # the later convolutions' weights together: c·c·(k_1 + ... + k_n); their biases and norms per layer
        _held(g, f"{s}/conv_layers/rest/conv", ops.Linear(c * _int(flags, "audio_conv_kernels"), c, bias=False),
              c, "Conv1d(c, c, k_i) weights, i ≥ 1")
        with g.repeat(f"{s}/conv_layers/rest", rest, label="feature-encoder layer (held)", role=R.STACK, length=_ONE):
            if bias:
                _vector(g, "conv/bias", c, "Conv1d bias")
            _norm(g, "layer_norm", c)
    _norm(g, f"{s}/layer_norm", c)
    _linear(g, f"{s}/projection", c, d_a, True)
    K, G = _int(flags, "audio_pos_kernel"), _int(flags, "audio_pos_groups")
    _linear(g, "audio_tower/encode_positions/conv", d_a / G * K, d_a, True, "grouped positional Conv1d")
    with g.repeat("audio_tower/layers", L_a, label="audio layer (held)", role=R.STACK, length=_ONE):
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            _linear(g, f"attention/{n}", d_a, d_a, True)
        _norm(g, "layer_norm", d_a)
        _linear(g, "feed_forward/intermediate_dense", d_a, d_ff_a, True)
        _linear(g, "feed_forward/output_dense", d_ff_a, d_a, True)
        _norm(g, "final_layer_norm", d_a)
    _norm(g, "audio_tower/layer_norm", d_a)
    _linear(g, "multi_modal_projector", d_a, d, True)
    return N_aud, "audio input", "audio encoder"


def _radio(g, flags):
    t = "vision_model/embeddings"
    _linear(g, f"{t}/patch_projection", C_img * P_patch ** 2, d_v, False, "patches (Linear C·P² -> d_v)")
    if flags["radio_video_frames"]:
        _linear(g, f"{t}/video_patch_projection", _int(flags, "radio_video_frames") * C_img * P_patch ** 2, d_v,
                False, "video patches (Linear t·C·P² -> d_v)")
    _held(g, f"{t}/position_embedding", ops.Embedding(_int(flags, "radio_positions"), d_v), d_v, "positions")
    if flags["radio_prefix"]:
        _held(g, f"{t}/cls_register_token", ops.Embedding(_int(flags, "radio_prefix"), d_v), d_v,
              "class and register tokens")
    with g.repeat("vision_model/encoder/layer", L_v, label="vision layer (held)", role=R.STACK, length=_ONE):
        for n in ("q_proj", "k_proj", "v_proj"):
            _linear(g, f"attention/{n}", d_v, d_v, bool(flags["radio_qkv_bias"]))
        _linear(g, "attention/o_proj", d_v, d_v, True)
        if flags["radio_swiglu"]:
            for n in ("gate_proj", "up_proj"):
                _linear(g, f"mlp/{n}", d_v, d_ff_v, True)
            _linear(g, "mlp/down_proj", d_ff_v, d_v, True)
        else:
            _linear(g, "mlp/fc1", d_v, d_ff_v, True)
            _linear(g, "mlp/fc2", d_ff_v, d_v, True)
        for n in ("norm1", "norm2"):
            _norm(g, n, d_v)
        for n in ("layer_scale1", "layer_scale2"):
            _vector(g, f"{n}/lambda1", d_v, "layer scale")
    if flags["omni_final_norm"]:
        _norm(g, "vision_final_layernorm", _int(flags, "omni_vision_width"))
    merged, hidden = _int(flags, "omni_merged"), _int(flags, "omni_projector")
    _norm(g, "multi_modal_projector/layer_norm", merged, rms=True)
    _linear(g, "multi_modal_projector/linear_1", merged, hidden, False)
    _linear(g, "multi_modal_projector/linear_2", hidden, d, False)
    return N_img, "an image or a video", "vision tower"


def _mlp(g, path, n_in, width, depth):
    """Janus's aligners: Linear(n_in, width), then depth - 1 Linear(width, width), biases."""
    _linear(g, f"{path}/fc1", n_in, width, True)
    if depth > 1:
        with g.repeat(f"{path}/hidden_layers", depth - 1, label="aligner layer (held)", role=R.STACK, length=_ONE):
            _linear(g, "linear", width, width, True)


def _janus(g, flags):
    t = "vision_model"
    _linear(g, f"{t}/embeddings/patch_embedding", C_img * P_patch ** 2, d_v, True, "patches (Conv2d P×P)")
    _held(g, f"{t}/embeddings/position_embedding", ops.Embedding(_int(flags, "janus_positions"), d_v), d_v,
          "positions")
    with g.repeat(f"{t}/encoder/layers", L_v, label="vision layer (held)", role=R.STACK, length=_ONE):
        for n in ("q_proj", "k_proj", "v_proj"):
            _linear(g, f"self_attn/{n}", d_v, d_v, bool(flags["janus_qkv_bias"]))
        _linear(g, "self_attn/projection_layer", d_v, d_v, True)
        if flags["janus_qk_norm"]:
            _norm(g, "self_attn/q_norm", d_v)
            _norm(g, "self_attn/k_norm", d_v)
        _linear(g, "mlp/fc1", d_v, d_ff_v, True)
        _linear(g, "mlp/fc2", d_ff_v, d_v, True)
        _norm(g, "layer_norm1", d_v)
        _norm(g, "layer_norm2", d_v)
    _norm(g, f"{t}/post_layernorm", d_v)
    _mlp(g, "aligner", d_v, _int(flags, "janus_aligner_width"), _int(flags, "janus_aligner_depth"))
    janus_generation(g, flags)
    return N_img, "an image", "vision tower"


def janus_generation(g, flags):
    """Janus's image tokenizer and generation modules, which no forward of the understanding path runs."""
    for part in ("encoder", "decoder"):
        _vector(g, f"vqmodel/{part}", _int(flags, f"vq_{part}_params"), f"VQ-VAE {part}: convolutions, GroupNorms "
                "and attention blocks, counted from vq_config")
    codes, dim, latent = _int(flags, "vq_codes"), _int(flags, "vq_code_dim"), _int(flags, "vq_latent")
    _held(g, "vqmodel/quantize/embedding", ops.Embedding(codes, dim), dim, "codebook")
    _linear(g, "vqmodel/quant_conv", latent, dim, True, "quant_conv (1×1)")
    _linear(g, "vqmodel/post_quant_conv", dim, latent, True, "post_quant_conv (1×1)")
    _held(g, "generation_embeddings", ops.Embedding(codes, dim), dim, "generation embeddings")
    p = _int(flags, "vq_projection")
    _mlp(g, "generation_aligner", dim, p, _int(flags, "vq_aligner_depth"))
    _linear(g, "generation_head/proj_out", _int(flags, "vq_token_dim"), p, True)
    _linear(g, "generation_head/vision_head", p, codes, True)


_TOWERS = {"janus": _janus, "ovis2": _ovis2, "fun_asr_nano": _fun_asr_nano, "omniasr": _omniasr, "radio": _radio}


def build(flags, bound, name, text, kind):
    """The decoder built by *text* (its family's builder), with the held tower *kind*."""
    arch = text(flags, bound, name=name)
    g = Builder(arch.name, declared_roles=True)
    g.graph, g.groups, g.order, g.constraints = arch.graph, dict(arch.groups), list(arch.order), list(arch.constraints)
    n, what, tower = _TOWERS[kind](g, flags)
    g.require("le", n, f"{what} is not modelled for {name} (its {tower} is held, its parameters counted): {n} must "
              "be 0", id="images_not_modelled" if n == N_img else "audio_not_modelled")
    return g.build(output=arch.output, loss=arch.loss, flags=arch.flags)
