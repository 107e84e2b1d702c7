"""Measurements of transformers' encoders, encoder--decoders and ViT (independent of symgpt).

``build(config, cls)`` builds the named transformers class (``BertForMaskedLM``, ``T5Model``,
``ViTForImageClassification``, ...) from a config dict with ``model_type`` on the meta device (or
CPU), eager attention. ``flops(model, ...)`` runs one forward (and optionally the backward of
``out.sum()``, where ``out`` is the logits, or the pooled output, or the last hidden state)
under ``FlopCounterMode`` -- which counts matmuls, bmm and convolutions at 2 FLOPs per
multiply-add and nothing else (see ``measure.py``). Inputs: token ids (B, T) for an encoder,
token ids (B, T_enc) and decoder token ids (B, T_dec) for an encoder--decoder, an image batch
(B, C, S, S) for ViT. No attention mask is passed: every key is attended (on meta a mask would
need ``.item()``).
"""
from __future__ import annotations

import os
import warnings

import torch
from torch.utils.flop_counter import FlopCounterMode

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def build(config: dict, cls: str, device: str = "meta"):
    import transformers
    from transformers import AutoConfig
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    cfg = dict(config)
    model_type = cfg.pop("model_type")
    hf_cfg = AutoConfig.for_model(model_type, **cfg)
    with torch.device(device):
        return getattr(transformers, cls)._from_config(hf_cfg, attn_implementation="eager")


def inputs(model, B: int, T: int | None = None, T_dec: int | None = None) -> dict:
    """The forward's keyword inputs for *model* (random ids / pixels on its device)."""
    cfg = model.config
    dev = next(model.parameters()).device
    if cfg.model_type == "vit":
        return {"pixel_values": torch.rand(B, cfg.num_channels, cfg.image_size, cfg.image_size, device=dev)}
    ids = torch.randint(0, cfg.vocab_size, (B, T), device=dev)
    if getattr(cfg, "is_encoder_decoder", False):
        return {"input_ids": ids, "decoder_input_ids": torch.randint(0, cfg.vocab_size, (B, T_dec), device=dev),
                "use_cache": False}
    return {"input_ids": ids}


def _output(out):
    for key in ("logits", "pooler_output", "last_hidden_state"):
        t = getattr(out, key, None)
        if t is not None:
            return t
    raise AssertionError(f"no output tensor in {type(out).__name__}")


def flops(model, B: int, T: int | None = None, T_dec: int | None = None, backward: bool = False) -> int:
    """FlopCounterMode's total for one forward (+ the backward of the output's sum)."""
    kw = inputs(model, B, T, T_dec)
    with FlopCounterMode(display=False) as fcm:
        with torch.enable_grad() if backward else torch.no_grad():
            out = _output(model(**kw))
            if backward:
                out.sum().backward()
    return fcm.get_total_flops()


def params(model) -> int:
    """``sum(p.numel() for p in model.parameters())`` (tied parameters once, buffers never)."""
    return sum(p.numel() for p in model.parameters())


def kv_cache_bytes(model, B: int, T: int, T_dec: int) -> int:
    """Bytes of every key and value tensor in the cache an encoder--decoder returns after one
    forward with ``use_cache=True`` over T encoder and T_dec decoder tokens: its
    ``EncoderDecoderCache``'s self-attention and cross-attention layers."""
    kw = {**inputs(model, B, T, T_dec), "use_cache": True}
    with torch.no_grad():
        cache = model(**kw).past_key_values
    total = 0
    for sub in (cache.self_attention_cache, cache.cross_attention_cache):
        for layer in sub.layers:
            total += layer.keys.numel() * layer.keys.element_size() + layer.values.numel() * layer.values.element_size()
    return total


def generation_steps(model, B: int, T: int, T_dec: int) -> dict:
    """An encoder--decoder generating: a prefill (the encoder over T tokens and the decoder over a
    prompt of T_dec tokens, ``use_cache=True``), then one decode step: (B, 1) new decoder ids,
    the returned ``EncoderDecoderCache`` and the encoder's outputs passed back, so the encoder
    does not run again and the new token attends to T_dec + 1 cached positions and to the T
    cached cross-attention keys. FlopCounterMode counts each call separately; the cache's bytes
    are taken after the prefill. Works on the meta device."""
    cfg = model.config
    dev = next(model.parameters()).device
    ids = torch.randint(0, cfg.vocab_size, (B, T), device=dev)
    dids = torch.randint(0, cfg.vocab_size, (B, T_dec), device=dev)
    with torch.no_grad():
        with FlopCounterMode(display=False) as pre:
            out = model(input_ids=ids, decoder_input_ids=dids, use_cache=True)
        cache = out.past_key_values
        nbytes = sum(t.numel() * t.element_size()
                     for sub in (cache.self_attention_cache, cache.cross_attention_cache)
                     for layer in sub.layers for t in (layer.keys, layer.values))
        enc = (out.encoder_last_hidden_state,)
        nxt = torch.randint(0, cfg.vocab_size, (B, 1), device=dev)
        with FlopCounterMode(display=False) as dec, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # transformers 5 renames the argument
            model(decoder_input_ids=nxt, encoder_outputs=enc, past_key_values=cache, use_cache=True)
    return {"prefill": pre.get_total_flops(), "decode": dec.get_total_flops(), "kv_cache": nbytes}


def check_causal_encoder(model_type: str, cls: str, cfg: dict, B: int) -> None:
    """An encoder run as a causal LM (*cls*, a ``...ForCausalLM``) at the configuration *cfg*:
    symgpt's parameters equal the module's, its forward FLOPs equal FlopCounterMode's at T = 5
    and 11, and its training FLOPs (forward + backward) at T = 6."""
    from symgpt.model.model import from_config

    hf = build(cfg, cls, device="cpu")
    m = from_config({**cfg, "architectures": [cls]}, model_type)
    assert m.params.value == params(hf)
    for T in (5, 11):
        assert m.with_(B=B, T=T).quantity("flops.forward").value == flops(hf, B, T), T
    assert m.with_(B=B, T=6).quantity("flops.train").value == flops(hf, B, 6, backward=True)
