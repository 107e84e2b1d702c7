"""Presets whose published config.json could not be copied, checked against their checkpoints.

Each file in tests/configs/assembled/ holds the shape fields of one checkpoint, taken from its
paper or model card and from public partial copies of its config.json (tests/configs/README.md
names them). The oracle that settles the file is the checkpoint itself: transformers' class named
in ``architectures``, built from the file on the meta device, holds exactly as many numbers as
the checkpoint's safetensors on the Hugging Face Hub (the Hub's own ``safetensors.total``, quoted
below with the public records that print it; for two Mamba checkpoints, the count of the
checkpoint as loaded). A single wrong width, layer count or vocabulary
size would miss that total. The preset of the same name must then be what symgpt reads from the
file, and count what transformers counts.
"""

import json
from pathlib import Path

import pytest
import torch
import transformers
from transformers.utils import logging as hf_logging

import symgpt
from oracles.measure import param_count

CONFIGS = Path(__file__).parent / "configs" / "assembled"

#: preset -> (file, family, the checkpoint's safetensors total on the Hub, text model only?)
#: The totals: the Hub API's ``safetensors.total`` of each repository, as printed by public model
#: reports and inventories found with the project's code search (e.g. "Num parameters |
#: 27,432,406,640 parameters (safetensors metadata)" for google/gemma-3-27b-it; "safetensors total
#: 6,919,161,856 BF16 params. Source: https://huggingface.co/api/models/allenai/OLMoE-1B-7B-0924";
#: "`meta-llama/Llama-3.1-405B`: (405853388800, 'b906e4dc...')").
ASSEMBLED = {
    "llama-3.1-405b": ("llama-3.1-405b.json", "llama", 405_853_388_800, False),
    "mistral-small-24b": ("mistral-small-24b-base-2501.json", "mistral", 23_572_403_200, False),
    "olmoe-1b-7b": ("olmoe-1b-7b-0924.json", "olmoe", 6_919_161_856, False),
    "gemma-3-4b": ("gemma-3-4b-it.json", "gemma3", 4_300_079_472, False),
    "gemma-3-12b": ("gemma-3-12b-it.json", "gemma3", 12_187_325_040, False),
    "gemma-3-27b": ("gemma-3-27b-it.json", "gemma3", 27_432_406_640, False),
    "llama-4-scout": ("llama-4-scout-17b-16e.json", "llama4_text", 108_641_793_536, True),
    "llama-4-maverick": ("llama-4-maverick-17b-128e.json", "llama4_text", 401_583_781_376, True),
    # these two: the parameters of the checkpoints loaded with transformers, as a public experiment
    # log prints them ("state-spaces/mamba-370m-hf (371,516,416 parameters)", "-1.4b-hf (1,372,178,432")
    "mamba-370m": ("mamba-370m-hf.json", "mamba", 371_516_416, False),
    "mamba-1.4b": ("mamba-1.4b-hf.json", "mamba", 1_372_178_432, False),
    # state-space checkpoints: xLSTM 7B's count is its paper's Table 4 (Beck et al. 2025, "6,865,424,896");
    # state-spaces/mamba2-2.7b's, a public transfer log of that checkpoint (revision 99b226cc...,
    # "unique core parameters: 2,702,599,680", the tied head counted once)
    "xlstm-7b": ("xlstm-7b.json", "xlstm", 6_865_424_896, False),
    "mamba2-2.7b": ("mamba2-2.7b.json", "mamba2", 2_702_599_680, False),
    # a public table of the mamba-*-hf checkpoints' parameters ("mamba-790m-hf"="793204224"; its
    # 130m, 370m, 1.4b and 2.8b rows are the counts of the presets checked above)
    "mamba-790m": ("mamba-790m-hf.json", "mamba", 793_204_224, False),
}

def _file(preset):
    return json.loads((CONFIGS / ASSEMBLED[preset][0]).read_text())


def _build(cfg):
    """transformers' class named in ``architectures``, from the file, on meta."""
    hf_logging.set_verbosity_error()
    cfg = dict(cfg)
    cls = getattr(transformers, cfg["architectures"][0])
    hf_cfg = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):
        model = cls(hf_cfg)
    model.tie_weights()
    return model


def _text_file(preset, tmp_path):
    """The file symgpt reads for the preset: the text model's config where the preset is one."""
    cfg = _file(preset)
    if ASSEMBLED[preset][3]:
        cfg = dict(cfg["text_config"], architectures=["Llama4ForCausalLM"])
    path = tmp_path / ASSEMBLED[preset][0]
    path.write_text(json.dumps(cfg))
    return path, cfg


@pytest.mark.parametrize("preset", sorted(ASSEMBLED))
def test_file_holds_the_checkpoint_total(preset):
    assert param_count(_build(_file(preset))) == ASSEMBLED[preset][2]


@pytest.mark.parametrize("preset", sorted(ASSEMBLED))
def test_preset_is_its_file_and_counts_what_transformers_counts(preset, tmp_path):
    path, cfg = _text_file(preset, tmp_path)
    p, c = symgpt.load(preset), symgpt.load(path)
    assert p.family is c.family and p.family.name == ASSEMBLED[preset][1]
    assert dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    n = param_count(_build(cfg))
    assert p.params == n, (preset, p.params.value, n)
    assert f"{n:,}" in symgpt.families.presets()[preset].note
    if not ASSEMBLED[preset][3]:
        assert n == ASSEMBLED[preset][2]


def test_llama4_checkpoints_differ_from_their_text_models_by_one_vision_tower():
    """Scout and Maverick share their vision encoder and projector: the same 871,932,416."""
    rest = {p: ASSEMBLED[p][2] - int(symgpt.load(p).params.value) for p in ("llama-4-scout", "llama-4-maverick")}
    assert set(rest.values()) == {871_932_416}
    for p in rest:
        assert f"{rest[p]:,}" in symgpt.families.presets()[p].note



#: GLM-4.5's checkpoints hold, besides the model transformers builds, one multi-token-prediction
#: layer (a decoder layer, its projection of [embedding; hidden] 2d -> d, three RMSNorms and its own
#: embedding and head, as the GLM-4.5 report and its model.safetensors.index.json name them) and
#: each MoE layer's expert-score correction bias, which transformers keeps as a buffer.
GLM = {"glm-4.5": (CONFIGS / "glm-4.5.json", 358_337_791_296),
       "glm-4.5-air": (CONFIGS.parent / "glm-4.5-air.json", 110_468_824_832)}


@pytest.mark.parametrize("preset", sorted(GLM))
def test_glm_checkpoint_is_the_model_plus_its_prediction_layer(preset, tmp_path):
    path, total = GLM[preset]
    cfg = json.loads(path.read_text())
    model = _build(cfg)
    biases = sum(b.numel() for name, b in model.named_buffers() if name.endswith("e_score_correction_bias"))
    last = model.model.layers[-1]
    layer = param_count(last) + last.mlp.gate.e_score_correction_bias.numel()
    d, V = cfg["hidden_size"], cfg["vocab_size"]
    prediction_layer = layer + 2 * d * d + 3 * d + 2 * V * d
    n = param_count(model)
    assert n + biases + prediction_layer == total
    p = symgpt.load(preset)
    assert p.params == n and f"{n:,}" in symgpt.families.presets()[preset].note
    copy = tmp_path / "config.json"
    copy.write_text(json.dumps(cfg))
    c = symgpt.load(copy)
    assert p.family is c.family and dict(p.sizes) == dict(c.sizes) and p.flags == c.flags


def test_command_r_counts_the_published_35b_from_two_agreeing_copies(tmp_path):
    """No exact total of CohereForAI/c4ai-command-r-v01 was found in public records: its file holds
    the sizes two independent partial copies of its config.json agree on (and transformers'
    CohereConfig defaults, documented as that checkpoint's), and the count rounds to the model
    card's 35 billion."""
    cfg = json.loads((CONFIGS / "c4ai-command-r-v01.json").read_text())
    n = param_count(_build(cfg))
    assert abs(n - 35 * 10**9) <= 5 * 10**8
    defaults = transformers.CohereConfig()
    for key in ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "vocab_size",
                "logit_scale", "tie_word_embeddings"):
        assert getattr(defaults, key) == cfg[key], key
    p = symgpt.load("command-r")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    c = symgpt.load(path)
    assert p.params == n and dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    assert f"{n:,}" in symgpt.families.presets()["command-r"].note
