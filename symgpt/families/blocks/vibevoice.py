"""VibeVoice (Microsoft 2025, "VibeVoice Technical Report"; transformers' ``VibeVoiceAsrForConditionalGeneration``
and ``VibeVoiceForConditionalGeneration``): σ-VAE speech tokenizers of causal 1-D convolutions and
ConvNeXt-like blocks, their connectors, and (VibeVoice) a diffusion head, held beside a Qwen2 text
decoder. Held: parameters counted at transformers' module paths, audio input refused.

A tokenizer is the flag string ``C,F,k,e,H;d0,d1,...;r1,r2,...`` (channels, num_filters,
kernel_size, ffn_expansion, hidden_size; depths; downsampling_ratios). Its encoder
(``VibeVoiceAcousticTokenizerEncoderModel``): a stem conv C -> F (kernel k) and d0 blocks of width F;
stage i a conv F·2^i -> F·2^(i+1) (kernel 2·r_i, stride r_i) and d_(i+1) blocks of width F·2^(i+1); a
head conv F·2^n -> H (kernel k). Its decoder (``...DecoderModel``) mirrors it over the reversed depths
and ratios with transposed convolutions. A block of width c (``...ConvNext1dLayer``): two RMSNorms,
two layer scales (gamma, ffn_gamma), a depthwise conv (kernel k, bias) and an FFN c -> e·c -> c with
biases. Every convolution has a bias.
"""

from __future__ import annotations

import sympy

from ... import ops
from ...core.errors import SymgptError
from ...core.symbols import N_aud, d
from .held_audio import held, linear, one, refuse_audio
from ...graph import roles as R


def tokenizer_spec(spec: str) -> tuple[int, int, int, int, int, list[int], list[int]]:
    """(C, F, k, e, H, depths, ratios) of a tokenizer flag string."""
    try:
        head, depths, ratios = str(spec).split(";")
        C, F, k, e, H = (int(b) for b in head.split(","))
        ds = [int(b) for b in depths.split(",")]
        rs = [int(b) for b in ratios.split(",")] if ratios else []
    except ValueError:
        raise SymgptError(f"a VibeVoice tokenizer is C,F,k,e,H;depths;ratios (integers), got {spec!r}") from None
    if min(C, F, k, e, H, *rs, 1) < 1 or min(ds) < 0 or len(ds) != len(rs) + 1:
        raise SymgptError(f"a VibeVoice tokenizer needs positive sizes and one depth more than ratios, got {spec!r}")
    return C, F, k, e, H, ds, rs


def _conv(g, path, n_in, n_out, kernel, label):
    held(g, path, ops.Linear(sympy.Integer(n_in * kernel), sympy.Integer(n_out), bias=True), sympy.Integer(n_in * kernel),
         label)


def _blocks(g, path, n, c, k, e):
    if not n:
        return
    c = sympy.Integer(c)
    with g.repeat(path, sympy.Integer(n), label="ConvNeXt block (held)", role=R.STACK, length=one()):
        for norm in ("norm", "ffn_norm"):
            held(g, norm, ops.RMSNorm(c), c, norm)
        for scale in ("gamma", "ffn_gamma"):
            held(g, scale, ops.ChannelScale(c), c, scale)
        _conv(g, "mixer", 1, c, k, "depthwise conv")
        linear(g, "ffn/linear1", c, e * c, True)
        linear(g, "ffn/linear2", e * c, c, True)


def encoder(g, prefix, spec):
    C, F, k, e, H, ds, rs = tokenizer_spec(spec)
    _conv(g, f"{prefix}/stem/conv", C, F, k, "stem conv")
    _blocks(g, f"{prefix}/stem/stage", ds[0], F, k, e)
    for i, r in enumerate(rs):
        _conv(g, f"{prefix}/conv_layers/{i}/conv", F * 2 ** i, F * 2 ** (i + 1), 2 * r, f"conv stride {r}")
        _blocks(g, f"{prefix}/conv_layers/{i}/stage", ds[i + 1], F * 2 ** (i + 1), k, e)
    _conv(g, f"{prefix}/head", F * 2 ** len(rs), H, k, "head conv")


def decoder(g, prefix, spec):
    C, F, k, e, H, ds, rs = tokenizer_spec(spec)
    ds, rs, top = ds[::-1], rs[::-1], len(ds) - 1
    _conv(g, f"{prefix}/stem/conv", H, F * 2 ** top, k, "stem conv")
    _blocks(g, f"{prefix}/stem/stage", ds[0], F * 2 ** top, k, e)
    for i, r in enumerate(rs):
        # a transposed convolution: weight (in, out, 2r), bias (out)
        _conv(g, f"{prefix}/conv_layers/{i}/convtr", F * 2 ** (top - i), F * 2 ** (top - 1 - i), 2 * r,
              f"transposed conv stride {r}")
        _blocks(g, f"{prefix}/conv_layers/{i}/stage", ds[i + 1], F * 2 ** (top - 1 - i), k, e)
    _conv(g, f"{prefix}/head", F, C, k, "head conv")


def connector(g, prefix, width, names=("linear_1", "act", "linear_2")):
    """linear_1 (width -> d, bias), an RMSNorm of d, linear_2 (d -> d, bias)."""
    linear(g, f"{prefix}/{names[0]}", sympy.Integer(width), d, True)
    held(g, f"{prefix}/{names[1]}", ops.RMSNorm(d), d, "RMSNorm")
    linear(g, f"{prefix}/{names[2]}", d, d, True)


def diffusion_head(g, flags):
    """``VibeVoiceDiffusionHead``: noisy_images_proj (latent -> d), cond_proj (d -> d), timestep_proj
    (freq -> d -> d), layers of a gated FFN (d -> ff), an RMSNorm and a modulation d -> 3d, a final
    layer (d -> 2d, d -> latent); no biases but the FFN's with mlp_bias."""
    p, lat = "model/diffusion_head", sympy.Integer(flags["diffusion_latent"])
    ff, bias = sympy.Integer(flags["diffusion_ffn"]), bool(flags["diffusion_mlp_bias"])
    linear(g, f"{p}/noisy_images_proj", lat, d, False)
    linear(g, f"{p}/cond_proj", d, d, False)
    linear(g, f"{p}/timestep_proj/fc1", sympy.Integer(flags["diffusion_frequencies"]), d, False)
    linear(g, f"{p}/timestep_proj/fc2", d, d, False)
    with g.repeat(f"{p}/layers", sympy.Integer(flags["diffusion_layers"]), label="diffusion layer (held)",
                  role=R.STACK, length=one()):
        linear(g, "ffn/gate_proj", d, ff, bias)
        linear(g, "ffn/up_proj", d, ff, bias)
        linear(g, "ffn/down_proj", ff, d, bias)
        held(g, "norm", ops.RMSNorm(d), d, "RMSNorm")
        linear(g, "linear", d, 3 * d, False)
    linear(g, f"{p}/final_layer/linear_1", d, 2 * d, False)
    linear(g, f"{p}/final_layer/linear_2", d, lat, False)


def asr_towers(g, x, flags):
    """VibeVoice-ASR: the acoustic and semantic tokenizers' encoders and the two-path projector."""
    encoder(g, "model/acoustic_tokenizer_encoder", flags["acoustic_tokenizer"])
    encoder(g, "model/semantic_tokenizer_encoder", flags["semantic_tokenizer"])
    for kind in ("acoustic", "semantic"):
        H = tokenizer_spec(flags[f"{kind}_tokenizer"])[4]
        connector(g, "model/multi_modal_projector", H, (f"{kind}_linear_1", f"{kind}_norm", f"{kind}_linear_2"))
    refuse_audio(g, N_aud, "VibeVoice-ASR")
    return x


def tts_towers(g, x, flags):
    """VibeVoice: the acoustic tokenizer (encoder and decoder), the semantic tokenizer's encoder, their
    connectors, the diffusion head and the two latent scalars."""
    encoder(g, "model/audio_tower/encoder", flags["acoustic_tokenizer"])
    decoder(g, "model/audio_tower/decoder", flags["acoustic_tokenizer"])
    encoder(g, "model/semantic_tokenizer_encoder", flags["semantic_tokenizer"])
    connector(g, "model/multi_modal_projector", tokenizer_spec(flags["acoustic_tokenizer"])[4])
    connector(g, "model/semantic_connector", tokenizer_spec(flags["semantic_tokenizer"])[4])
    diffusion_head(g, flags)
    for name in ("latent_scaling_factor", "latent_bias_factor"):
        held(g, f"model/{name}", ops.ChannelScale(one()), one(), name)
    refuse_audio(g, N_aud, "VibeVoice")
    return x


def build(flags, bound, name="vibevoice_asr", labels=None):
    from functools import partial

    from .decoder import build as decoder_build

    towers = asr_towers if name == "vibevoice_asr" else tts_towers
    return decoder_build(flags, bound, name=name, labels=labels, vision=partial(towers, flags=flags))
