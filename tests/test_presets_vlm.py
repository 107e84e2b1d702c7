"""Presets of vision--language checkpoints, each checked against its config.json and its checkpoint.

Each preset's file is under tests/configs/vlm/ (tests/configs/README.md names the public copy or
the public partial copies each was taken from). Two oracles settle each preset: transformers' class
named in ``architectures``, built from the file on the meta device, holds exactly the number of
parameters that public records print for the checkpoint (quoted below); and the preset is what
symgpt reads from the file (family, flags, sizes), so that it counts what transformers counts and
prices images as the file does.
"""

import json
from pathlib import Path

import pytest
import torch
import transformers
from transformers.utils import logging as hf_logging

import symgpt
from oracles.measure import param_count

CONFIGS = Path(__file__).parent / "configs" / "vlm"

#: preset -> (file, family, the checkpoint's parameters as public records print them, the image workload)
#: llava-hf/llava-1.5-7b-hf: "n = sum(p.numel() for p in model.parameters()) # 7063427072" after
#:   from_pretrained (a public blog post on fine-tuning LLaVA), and a public audit of the checkpoint's
#:   safetensors headers at revision b234b804b114d9e37bb655e11cbbb5f5e971b7a9 ("686 tensors,
#:   7,063,427,072 parameters, tensor payload 14,126,854,144 bytes");
#: google/paligemma-3b-mix-224 (the architecture of -pt-224): a public model-tree print of
#:   PaliGemmaForConditionalGeneration loaded from the Hub ("2,923,466,480 params"; embedding
#:   [257216, 2048]); KerasHub's preset table gives 2,923,335,408 for the same model over big_vision's
#:   257,152 tokens, 64·2048 fewer;
#: meta-llama/Llama-3.2-11B-Vision-Instruct: NVIDIA's model card ("Parameters: 10,670,220,835") and a
#:   public table of Hub checkpoints' parameter counts ("meta-llama/llama-3.2-11b-vision-instruct": 10670220835);
#: HuggingFaceTB/SmolVLM-256M-Instruct and -500M-Instruct: public tables of the Hub's metadata
#:   ("256,484,928 BF16 parameters"; "SmolVLM-500M | 507,482,304"); docling-project/SmolDocling-256M-preview,
#:   fine-tuned from the 256M, holds the same 256,484,928.
VLM = {
    "llava-1.5-7b": ("llava-1.5-7b.json", "llava", 7_063_427_072, {}),
    "paligemma-3b-224": ("paligemma-3b-224.json", "paligemma", 2_923_466_480, {}),
    "llama-3.2-11b-vision": ("llama-3.2-11b-vision.json", "mllama", 10_670_220_835, {"vision_run": True}),
    "smolvlm-256m": ("smolvlm-256m-instruct.json", "idefics3", 256_484_928, {}),
    "smolvlm-500m": ("smolvlm-500m-instruct.json", "idefics3", 507_482_304, {}),
}


def _path(preset):
    return CONFIGS / VLM[preset][0]


def _build(preset):
    """transformers' class named in ``architectures``, from the file, on meta."""
    hf_logging.set_verbosity_error()
    cfg = json.loads(_path(preset).read_text())
    cls = getattr(transformers, cfg.pop("architectures")[0])
    hf_cfg = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):
        model = cls(hf_cfg)
    model.tie_weights()
    return model


@pytest.mark.parametrize("preset", sorted(VLM))
def test_file_holds_the_checkpoint_total(preset):
    assert param_count(_build(preset)) == VLM[preset][2]


@pytest.mark.parametrize("preset", sorted(VLM))
def test_preset_is_its_file_and_counts_what_transformers_counts(preset):
    p, c = symgpt.load(preset), symgpt.load(_path(preset))
    assert p.family is c.family and p.family.name == VLM[preset][1]
    assert dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    n = VLM[preset][2]
    assert p.params == n, (preset, p.params.value, n)
    assert f"{n:,}" in symgpt.families.presets()[preset].note


@pytest.mark.parametrize("preset", sorted(VLM))
def test_preset_prices_an_image_as_its_file_does(preset):
    """N_img is 0 by default (a forward over token ids, as in the other vision--language presets);
    one image, with the switch the note names, costs what the file's model costs."""
    assert symgpt.load(preset).sizes["N_img"] == 0
    extra = VLM[preset][3]
    note = symgpt.families.presets()[preset].note
    assert "--set N_img=1" in note and all(f"--set {k}=true" in note for k in extra)
    work = dict(B=1, T=1024, N_img=1, **extra)
    none = symgpt.load(preset, B=1, T=1024).quantity("flops.forward").value
    one = symgpt.load(preset, **work).quantity("flops.forward").value
    assert one == symgpt.load(_path(preset), **work).quantity("flops.forward").value
    assert one > none
