"""Janus (DeepSeek 2024; transformers' ``JanusForConditionalGeneration``): a LLaMA decoder beside
modules a forward over token ids never runs, held (``blocks/held_towers.py``, kind ``janus``):
the understanding tower (``JanusVisionModel``: a SigLIP-style ViT with LayerNorm blocks) and its
aligner MLP, the image tokenizer (``JanusVQVAE``: a convolutional encoder and decoder, a codebook,
the 1×1 quant and post-quant convolutions) and the generation modules (``generation_embeddings``,
``generation_aligner``, ``generation_head``). The head is tied to the token embedding by the top
level's tie_word_embeddings (``_tied_weights_keys``). Where the aligner's width is the decoder's
and the tower has no Q/K norms (``janus_run``), the tower and aligner are priced per image instead
(``blocks/janus.py``); the default configuration's aligner (2048) is narrower than its decoder
(4096), so it is held there.

The VQ-VAE's encoder and decoder are counted from vq_config (their shapes:
``JanusVQVAEEncoder`` and ``JanusVQVAEDecoder``), each held as one block of parameters.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .fields import Fields, Reader, note_leftovers, sub_fields
from .base import Family
from .held_towers import COMMON, NOT_RUN, VISION_SIZES, extend, read_text
from .llama import FAMILIES as _LLAMA, READERS as _LLAMA_READERS

_FLAGS = {"janus_run": False, "janus_activation": "gelu", "janus_positions": 576, "janus_qkv_bias": True, "janus_qk_norm": False, "janus_aligner_width": 2048,
          "janus_aligner_depth": 2, "vq_encoder_params": 29298176, "vq_decoder_params": 42449795, "vq_codes": 16384,
          "vq_code_dim": 8, "vq_latent": 256, "vq_projection": 2048, "vq_aligner_depth": 2, "vq_token_dim": 2048}
_HELP = {"janus_run": "the vision tower and aligner run on N_img images (the aligner's width is the decoder's, "
                      "no Q/K norms); false: held, N_img must be 0",
         "janus_activation": "the vision MLP's and the aligner's activation (vision_config.hidden_act)",
         "janus_positions": "rows of the vision tower's position table ((image_size / P)²)",
         "janus_qkv_bias": "the vision tower's q/k/v projections have biases (attention_bias)",
         "janus_qk_norm": "LayerNorms of d_v on the vision tower's queries and keys (use_qk_norm)",
         "janus_aligner_width": "the aligner MLP's width (vision_config.projection_dim)",
         "janus_aligner_depth": "the aligner MLP's linears (vision_config.depth)",
         "vq_encoder_params": "parameters of the VQ-VAE's convolutional encoder, counted from vq_config",
         "vq_decoder_params": "parameters of the VQ-VAE's convolutional decoder, counted from vq_config",
         "vq_codes": "the codebook's entries (num_embeddings)", "vq_code_dim": "a code's width (embed_dim)",
         "vq_latent": "the VQ-VAE's latent channels (latent_channels)",
         "vq_projection": "the generation aligner's and head's width (vq_config.projection_dim)",
         "vq_aligner_depth": "the generation aligner's linears (vq_config.num_hidden_layers)",
         "vq_token_dim": "the generation head's input width (image_token_embed_dim)"}

_TEXT = _LLAMA[0]
FAMILIES = (Family(name="janus", description="Janus: a LLaMA decoder, a SigLIP-style understanding tower, a VQ-VAE "
                   "image tokenizer and image-generation modules (held: a forward over token ids runs none of them; "
                   "the tower priced per image where janus_run)",
                   flags=extend(_TEXT.flags, _FLAGS), sizes=tuple(_TEXT.sizes) + VISION_SIZES + ("S_img", "h_v"),
                   optional=tuple(_TEXT.optional),
                   build=partial(Ref("symgpt.families.blocks.janus", "build"), name="janus", text=_TEXT.build),
                   flag_help=extend(_TEXT.flag_help, _HELP),
                   choices=extend(_TEXT.choices, {"janus_activation": ("gelu", "gelu_tanh", "gelu_new", "silu",
                                                                       "relu")})),)


def _resnet(c_in: int, c_out: int) -> int:
    """JanusVQVAEResnetBlock: GroupNorm(c_in), 3×3 conv, GroupNorm(c_out), 3×3 conv, a 1×1 shortcut
    where the widths differ (every conv with a bias)."""
    n = 2 * c_in + 9 * c_in * c_out + c_out + 2 * c_out + 9 * c_out * c_out + c_out
    return n + (c_in * c_out + c_out if c_in != c_out else 0)


def _attn(c: int) -> int:
    return 2 * c + 4 * (c * c + c)  # JanusVQVAEAttnBlock: GroupNorm, 1×1 q, k, v, proj_out


def _mid(c: int) -> int:
    return 2 * _resnet(c, c) + _attn(c)  # JanusVQVAEMidBlock


def _encoder(base: int, mult: list[int], blocks: int, c_in: int, z: int) -> int:
    """JanusVQVAEEncoder: conv_in, per level *blocks* resnet blocks (attention blocks at the lowest
    resolution) and a 3×3 stride-2 downsample between levels, the mid block, norm_out, conv_out to
    *z* channels."""
    enc, c = 9 * c_in * base + base, base  # conv_in
    for level, m in enumerate(mult):
        for _ in range(blocks):
            enc, c = enc + _resnet(c, base * m), base * m
            enc += _attn(c) if level == len(mult) - 1 else 0
        enc += 9 * c * c + c if level != len(mult) - 1 else 0
    return enc + _mid(c) + 2 * c + 9 * c * z + z  # mid, norm_out, conv_out


def _decoder(base: int, mult: list[int], blocks: int, latent: int, c_out: int) -> int:
    """JanusVQVAEDecoder: conv_in, the mid block, per level (highest multiplier first) blocks + 1
    resnet blocks (attention blocks at the lowest resolution) and a 3×3 upsample convolution between
    levels, norm_out, conv_out."""
    c = base * mult[-1]
    dec = 9 * latent * c + c + _mid(c)  # conv_in, mid
    for level in reversed(range(len(mult))):
        for _ in range(blocks + 1):
            dec, c = dec + _resnet(c, base * mult[level]), base * mult[level]
            dec += _attn(c) if level == len(mult) - 1 else 0
        dec += 9 * c * c + c if level != 0 else 0
    return dec + 2 * c + 9 * c * c_out + c_out  # norm_out, conv_out


def _vq(f: Fields, flags: dict) -> None:
    q = sub_fields(f, "vq_config")
    mult, _ = q.get("channel_multiplier", [1, 1, 2, 2, 4])
    if not (isinstance(mult, list) and mult and all(isinstance(m, int) and not isinstance(m, bool) and m > 0
                                                    for m in mult)):
        raise SymgptError(f"{q.where}: channel_multiplier must be a list of positive integers")
    base, blocks = q.int("base_channels", 128), q.int("num_res_blocks", 2)
    if any((base * m) % 32 for m in [1, *mult]):
        raise SymgptError(f"{q.where}: base_channels × channel_multiplier must be multiples of 32 (GroupNorm's groups)")
    latent = q.int("latent_channels", 256)
    z = 2 * latent if q.bool("double_latent", False) else latent
    flags.update(vq_encoder_params=_encoder(base, mult, blocks, q.int("in_channels", 3), z), vq_decoder_params=_decoder(base, mult, blocks, latent, q.int("out_channels", 3)),
                 vq_codes=q.int("num_embeddings", 16384), vq_code_dim=q.int("embed_dim", 8), vq_latent=latent,
                 vq_projection=q.int("projection_dim", 2048), vq_aligner_depth=q.int("num_hidden_layers", 2),
                 vq_token_dim=q.int("image_token_embed_dim", 2048))
    q.silent("num_patches", "dropout", *COMMON)
    note_leftovers(f, q, "vq_config")


def read(f: Fields):
    """transformers' JanusConfig: text_config (LlamaConfig), vision_config (JanusVisionConfig),
    vq_config (JanusVQVAEConfig)."""
    flags, sizes = read_text(f, "llama", _LLAMA_READERS["llama"], "Janus")
    v = sub_fields(f, "vision_config")
    for key in ("image_size", "patch_size"):
        if not isinstance(v.cfg.get(key, 0), int):
            raise SymgptError(f"{v.where}: {key} given as a list is not modelled")
    sizes.update(d_v=v.int("hidden_size", 1024), L_v=v.int("num_hidden_layers", 24), P_patch=v.int("patch_size", 16),
                 C_img=v.int("num_channels", 3), N_img=0)
    heads = v.int("num_attention_heads", 16)
    if sizes["d_v"] % heads:
        raise SymgptError(f"{v.where}: hidden_size must be a multiple of num_attention_heads")
    mlp, _ = v.get("mlp_ratio", 4.0)
    if isinstance(mlp, bool) or not isinstance(mlp, (int, float)) or int(sizes["d_v"] * mlp) < 1:
        raise SymgptError(f"{v.where}: field 'mlp_ratio' must be a positive number")
    sizes["d_ff_v"] = int(sizes["d_v"] * mlp)  # JanusVisionMLP: int(hidden_size * mlp_ratio)
    side = v.int("image_size", 384) // sizes["P_patch"]
    if side < 1:
        raise SymgptError(f"{v.where}: image_size must be at least patch_size")
    flags.update(janus_positions=side * side, janus_qkv_bias=v.bool("attention_bias", True),
                 janus_qk_norm=v.bool("use_qk_norm", False), janus_aligner_width=v.int("projection_dim", 2048),
                 janus_aligner_depth=v.int("depth", 2))
    flags["janus_activation"] = v.activation("hidden_act", "gelu")
    if flags["janus_activation"] not in ("gelu", "gelu_tanh", "gelu_new", "silu", "relu"):
        raise SymgptError(f"{v.where}: hidden_act {v.cfg.get('hidden_act')!r} is not modelled for Janus's tower")
    sizes.update(S_img=v.int("image_size", 384), h_v=heads)
    # the tower runs on images where the aligner's output is the decoder's width and no Q/K norm is built
    flags["janus_run"] = flags["janus_aligner_width"] == sizes["d"] and not flags["janus_qk_norm"]
    v.silent("num_image_tokens", "hidden_dropout_rate", "projection_dropout", *COMMON)
    note_leftovers(f, v, "vision_config")
    _vq(f, flags)
    flags["tied"] = f.bool("tie_word_embeddings", True)  # JanusForConditionalGeneration's _tied_weights_keys
    f.silent("image_token_id", *COMMON)
    if flags["janus_run"]:
        f.notes.append("the vision tower and aligner run on N_img images of S_img × S_img pixels, (S_img/P_patch)² "
                       "tokens each, counted in T; the VQ-VAE image tokenizer and the generation modules never run "
                       "in this forward: their parameters are counted, held")
    else:
        f.notes.append(NOT_RUN.format(what="vision tower, image tokenizer or generation head", input="an image",
                                      n="N_img") + "; the aligner's width differs from the decoder's or the tower "
                       "has Q/K norms")
    return "janus", flags, sizes


READERS = {"janus": Reader(read, ("JanusForConditionalGeneration",))}

PRESETS: tuple = ()
