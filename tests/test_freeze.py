"""``--freeze`` (``symgpt/derive/freeze.py``): a vision--language or speech--language model trained
with its tower, projector or language model frozen, against transformers' classes on CPU with
those modules' ``requires_grad_(False)``:

* trainable parameters: ``sum(p.numel() for p in model.parameters() if p.requires_grad)``;
* saved activations: every storage autograd saves during a training forward with a loss, under
  ``torch.autograd.graph.saved_tensors_hooks`` (``oracles.measure.saved_tensors``);
* FLOPs: ``FlopCounterMode`` of the forward and ``loss.backward()`` together.

Tiny LLaVA (CLIP tower, two-layer projector, Llama), PaliGemma (SigLIP tower, one linear, Gemma)
and Voxtral (a Whisper-style audio tower, Llama) models, one image or clip each, B = 1.
"""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from oracles.measure import saved_tensors
from symgpt.core.errors import SymgptError
from symgpt.derive.freeze import Freeze, apply

IMAGE_TOKEN = 5
VISION = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3, "num_attention_heads": 2,
          "image_size": 28, "patch_size": 7}
TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256}
LLAVA = {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
         "image_token_index": IMAGE_TOKEN, "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
         "projector_hidden_act": "gelu", "text_config": {"model_type": "llama", **TEXT},
         "vision_config": {"model_type": "clip_vision_model", **VISION}}
PALIGEMMA = {"model_type": "paligemma", "architectures": ["PaliGemmaForConditionalGeneration"],
             "image_token_index": IMAGE_TOKEN, "projection_dim": 64, "hidden_size": 64,
             "text_config": {"model_type": "gemma", **TEXT, "num_attention_heads": 2, "num_key_value_heads": 1,
                             "head_dim": 32},
             "vision_config": {"model_type": "siglip_vision_model", **VISION, "projection_dim": 64}}
VOXTRAL = {"model_type": "voxtral", "architectures": ["VoxtralForConditionalGeneration"], "audio_token_id": 5,
           "audio_config": {"model_type": "voxtral_encoder", "hidden_size": 16, "num_hidden_layers": 2,
                            "num_attention_heads": 2, "intermediate_size": 64, "num_mel_bins": 6,
                            "max_source_positions": 8},
           "text_config": {"model_type": "llama", **TEXT, "vocab_size": 64}}
#: symgpt's counting under which PyTorch on CPU is measured (tests/test_activations_families.py)
OPTS = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)


def _model(cfg):
    cls = getattr(transformers, cfg["architectures"][0])
    config = cls.config_class(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    return cls._from_config(config, attn_implementation="eager")


def _modules(model, kind):
    """transformers' modules of each part, as ``derive.freeze`` names them."""
    inner = model.model
    tower = inner.audio_tower if kind == "audio" else inner.vision_tower
    return {kind: [tower], "projector": [inner.multi_modal_projector],
            "language": [inner.language_model, model.lm_head]}


def _inputs(cfg, media: bool):
    """(keyword inputs of one training step, T, the media symbol's value)."""
    if cfg["model_type"] == "voxtral":  # one clip: 8 encoder positions stacked 4 to a row, 2 tokens
        ids = torch.tensor([[5, 5, 9, 10, 11, 12, 13, 14]]) if media else torch.tensor([[7, 8, 9, 10, 11, 12, 13, 14]])
        kw = {"input_features": torch.rand(1, 6, 16)} if media else {}
    else:
        t = 16  # (28/7)² patches
        ids = torch.tensor([[2] + [IMAGE_TOKEN if media else 8] * t + [9, 10, 11]])
        kw = {"pixel_values": torch.rand(1, 3, 28, 28)} if media else {}
        if cfg["model_type"] == "paligemma":  # training needs the prefix / suffix split
            kw["token_type_ids"] = torch.tensor([[0] * (t + 1) + [1] * 3])
    return {"input_ids": ids, "labels": ids, "use_cache": False, **kw}, ids.shape[1]


def _measure(model, kw):
    """(saved bytes, FLOPs of forward and backward) of one training step."""
    saved = sum(e["nbytes"] for e in saved_tensors(model, 0, 0, forward=lambda m: m(**kw)))
    model.train()
    with FlopCounterMode(display=False) as fc:
        loss = model(**kw).loss
        if loss.requires_grad:
            loss.backward()
    return saved, fc.get_total_flops()


def _symgpt(tmp_path, cfg, parts, T, n):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    media = "N_aud" if cfg["model_type"] == "voxtral" else "N_img"
    m = apply(symgpt.load(str(path), B=1, T=T, **{media: n}), Freeze(parts))
    return (m.quantity("params.trainable").value, m.quantity("memory.activations", **OPTS).value,
            m.quantity("flops.train").value, m)


CASES = [(LLAVA, ("vision",)), (LLAVA, ("vision", "projector")), (LLAVA, ("vision", "language")),
         (PALIGEMMA, ("vision",)), (PALIGEMMA, ("vision", "projector")),
         (VOXTRAL, ("audio",)), (VOXTRAL, ("audio", "projector"))]


@pytest.mark.parametrize("cfg, parts", CASES, ids=[f"{c['model_type']}-{'+'.join(p)}" for c, p in CASES])
def test_frozen_parts_against_pytorch(tmp_path, cfg, parts):
    model = _model(cfg)
    kind = "audio" if cfg["model_type"] == "voxtral" else "vision"
    for part in parts:
        for module in _modules(model, kind)[part]:
            module.requires_grad_(False)
    kw, T = _inputs(cfg, media=True)
    saved, flops = _measure(model, kw)
    trainable, acts, train, m = _symgpt(tmp_path, cfg, parts, T, 1)
    assert trainable == sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert acts == saved
    assert train == flops
    # the frozen tower: no row of saved tensors, no backward
    towers = ("audio_tower/",) if kind == "audio" else ("vision_tower/",)
    rows = dict(m.quantity("memory.activations", **OPTS).breakdown) | dict(m.quantity("flops.backward").breakdown)
    assert not [p for p in rows if p.startswith(towers)]
    if "language" not in parts:  # the text-only step: the same model without its image or clip
        kw, T0 = _inputs(cfg, media=False)
        saved0, flops0 = _measure(model, kw)
        _, acts0, train0, _ = _symgpt(tmp_path, cfg, parts, T0, 0)
        assert (acts0, train0) == (saved0, flops0)


GC_CASES = [(LLAVA, ("vision",)), (LLAVA, ("vision", "projector")), (PALIGEMMA, ("vision",)), (VOXTRAL, ("audio",))]


@pytest.mark.parametrize("cfg, parts", GC_CASES, ids=[f"{c['model_type']}-{'+'.join(p)}" for c, p in GC_CASES])
def test_frozen_tower_keeps_no_checkpoints(tmp_path, cfg, parts):
    """--recompute full: transformers' activation checkpointing of every layer, its hook that makes
    each sub-model's input embeddings require grad removed (``disable_input_require_grads``: the
    tower's patch embedding is one of them). What one image or clip adds to the bytes autograd still
    holds after the forward (``oracles.measure.retained_activation_bytes``) is the projector's and the
    merge's alone: the frozen tower's layers keep no checkpointed input."""
    from oracles.measure import retained_activation_bytes

    model = _model(cfg)
    kind = "audio" if cfg["model_type"] == "voxtral" else "vision"
    for part in parts:
        for module in _modules(model, kind)[part]:
            module.requires_grad_(False)
    model.activation_checkpointing_enable()
    model.disable_input_require_grads()
    held, ours = [], []
    for media in (True, False):
        kw, T = _inputs(cfg, media)
        held.append(retained_activation_bytes(model, 0, 0, forward=lambda m: m(**kw)))
        m = _symgpt(tmp_path, cfg, parts, T, int(media))[3]
        ours.append(m.quantity("memory.activations", recompute="full", **OPTS).value)
    assert ours[0] - ours[1] == held[0] - held[1] > 0
    rows = dict(m.with_(**{"N_aud" if kind == "audio" else "N_img": 1}).quantity(
        "memory.activations", recompute="full", **OPTS).breakdown)
    assert not [p for p in rows if p.startswith(("vision_tower/", "audio_tower/"))]


def test_refusals(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAVA))
    llava = symgpt.load(str(path))
    for parts, words in ((("audio",), "has no audio tower"), (("vision", "projector", "language"), "nothing"),
                         (("eyes",), "--freeze takes")):
        with pytest.raises(SymgptError, match=words):
            apply(llava, Freeze(parts))
    with pytest.raises(SymgptError, match="N_img must be at least 1"):
        apply(llava.with_(N_img=0), Freeze(("vision", "language")))
    with pytest.raises(SymgptError, match="has no vision or audio tower"):
        apply(symgpt.load("gpt2-small"), Freeze(("vision",)))


def test_cli_llava_1_5_7b(tmp_path):
    """llava-hf/llava-1.5-7b-hf's config.json: the trainable parameters with the tower frozen equal
    transformers' model on the meta device less its vision tower's; gradients are 4 bytes each (fp32)."""
    from pathlib import Path

    from clirun import run

    path = Path(__file__).parent / "configs" / "vlm" / "llava-1.5-7b.json"
    cfg = json.loads(path.read_text())
    config = transformers.LlavaConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = transformers.LlavaForConditionalGeneration(config)
    model.model.vision_tower.requires_grad_(False)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    r = run(["memory", str(path), "--freeze", "vision", "--set", "B=1", "--set", "N_img=1", "--set", "T=1024",
             "--json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["params.trainable"]["value"] == trainable
    assert out["params.frozen"]["value"] == sum(p.numel() for p in model.model.vision_tower.parameters())
    assert out["memory.gradients"]["value"] == 4 * trainable
    assert out["freeze"]["modules"] == {"vision": ["vision_tower"]} and "records nothing" in out["freeze"]["note"]
    text = run(["flops", str(path), "--freeze", "vision", "--set", "B=1", "--set", "N_img=1", "--set", "T=1024"])
    assert text.returncode == 0 and "records nothing in it" in text.stdout
    bad = run(["memory", "gpt2-small", "--freeze", "vision"])
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "no vision or audio tower" in bad.stderr


def test_the_unread_tower_layer_note_is_the_backward_overcount(tmp_path):
    """LLaVA trained whole: its projector reads hidden state -2, so PyTorch runs no backward through
    the tower's last layer. The answer's note says flops.train overcounts by twice that layer's
    forward FLOPs: measured with FlopCounterMode on the tiny model (forward + loss.backward())."""
    model = _model(LLAVA)
    kw, T = _inputs(LLAVA, media=True)
    _, flops = _measure(model, kw)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAVA))
    m = symgpt.load(str(path), B=1, T=T, N_img=1)
    assert any("no gradient reaches the last 1 vision layer(s)" in n for n in m.notes)
    layer = sum(v for p, v in m.quantity("flops.forward").values().items()
                if p.startswith("vision_tower/encoder/layers/"))  # the L_v = 3 layers' forward
    assert m.quantity("flops.train").value - flops == 2 * layer / 3
