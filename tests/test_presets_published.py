"""The presets of current published checkpoints against their config.json files
(tests/configs/published/, named with their Hub repositories in tests/configs/README.md).

Oracles: each preset equals what symgpt reads from the checkpoint's own config.json (family,
flags, sizes), and its parameter count equals ``sum(p.numel() for p in model.parameters())`` of
transformers' class built from that file on the meta device; the note sets that exact count beside
the publisher's quoted size.
"""

import json
from pathlib import Path

import pytest

import symgpt
from oracles.measure import _hf_model, param_count
from symgpt.core.errors import SymgptError

CONFIGS = Path(__file__).parent / "configs" / "published"

# preset -> (config file, family)
PUBLISHED = {
    "llama-3.1-8b": ("llama-3.1-8b.json", "llama"),
    "llama-3.1-70b-instruct": ("llama-3.1-70b-instruct.json", "llama"),
    "llama-3.2-1b-instruct": ("llama-3.2-1b-instruct.json", "llama"),
    "llama-3.2-3b": ("llama-3.2-3b.json", "llama"),
    "qwen2.5-7b": ("qwen2.5-7b.json", "qwen2"),
    "qwen2.5-72b-instruct": ("qwen2.5-72b-instruct.json", "qwen2"),
    "qwen3-0.6b": ("qwen3-0.6b.json", "qwen3"),
    "qwen3-1.7b": ("qwen3-1.7b.json", "qwen3"),
    "qwen3-4b": ("qwen3-4b.json", "qwen3"),
    "qwen3-14b": ("qwen3-14b.json", "qwen3"),
    "qwen3-32b": ("qwen3-32b.json", "qwen3"),
    "qwen3-235b-a22b-instruct-2507": ("qwen3-235b-a22b-instruct-2507.json", "qwen3_moe"),
    "deepseek-r1": ("deepseek-r1.json", "deepseek_v3"),
    "kimi-k2-instruct": ("kimi-k2-instruct.json", "deepseek_v3"),
    "phi-4": ("phi-4.json", "phi3"),
    "olmo2-13b": ("olmo2-13b.json", "olmo2"),
    # state-space, convolution and hybrid models
    "mamba-130m": ("mamba-130m.json", "mamba"),
    "mamba-2.8b": ("mamba-2.8b.json", "mamba"),
    "falcon-mamba-7b": ("falcon-mamba-7b.json", "mamba"),
    "lfm2-1.2b": ("lfm2-1.2b.json", "lfm2"),
    "jamba-1.5-mini": ("jamba-1.5-mini.json", "hybrid1"),
    "nemotron-h-8b": ("nemotron-h-8b.json", "hybrid"),
    "qwen3-next-80b-a3b": ("qwen3-next-80b-a3b.json", "qwen3_next"),
    # state-space and linear-attention checkpoints
    "recurrentgemma-2b": ("recurrentgemma-2b.json", "recurrent_gemma"),
    "kimi-linear-48b-a3b": ("kimi-linear-48b-a3b-instruct.json", "kimi_linear"),
}

#: counts from the checkpoints' weight files, independent of any config reading
WEIGHTS = {
    # model.safetensors.index.json of allenai/OLMo-2-1124-13B: total_size 54,864,793,600 bytes of float32
    "olmo2-13b": 54_864_793_600 // 4,
    # Qwen2.5-72B-Instruct's 963 safetensors tensors, summed by a public weight report
    "qwen2.5-72b-instruct": 72_706_203_648,
    # Qwen3-0.6B's safetensors hold 751,632,384 numbers: the tied head is stored again as lm_head
    "qwen3-0.6b": 751_632_384 - 151936 * 1024,
    # google/recurrentgemma-2b's safetensors metadata: 2,682,862,080 parameters (a public model report)
    "recurrentgemma-2b": 2_682_862_080,
}


def _cfg(preset):
    """The stored config.json as published; Kimi K2's with model_type deepseek_v3, the model
    card's workaround for frameworks without a kimi_k2 type (its architectures name
    DeepseekV3ForCausalLM)."""
    cfg = json.loads((CONFIGS / PUBLISHED[preset][0]).read_text())
    if cfg["model_type"] == "kimi_k2":
        cfg["model_type"] = "deepseek_v3"
    return cfg


def _load_config(preset, tmp_path):
    path = tmp_path / PUBLISHED[preset][0]
    path.write_text(json.dumps(_cfg(preset)))
    return symgpt.load(path)


@pytest.mark.parametrize("preset", sorted(PUBLISHED))
def test_preset_is_its_config_file(preset, tmp_path):
    p, c = symgpt.load(preset), _load_config(preset, tmp_path)
    assert p.family.name == c.family.name == PUBLISHED[preset][1]
    assert p.family is c.family and dict(p.sizes) == dict(c.sizes) and p.flags == c.flags


@pytest.mark.parametrize("preset", sorted(PUBLISHED))
def test_preset_count_is_transformers_count_and_in_its_note(preset):
    p = symgpt.load(preset)
    n = param_count(_hf_model(_cfg(preset), "meta", "eager"))
    assert p.params == n, (preset, p.params.value, n)
    assert f"{n:,}" in symgpt.families.presets()[preset].note
    if preset in WEIGHTS:
        assert n == WEIGHTS[preset]


def test_tied_heads_are_counted_once():
    """Llama 3.2 1B/3B and the small Qwen3 models tie the output head to the embedding."""
    for preset in ("llama-3.2-1b-instruct", "llama-3.2-3b", "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b"):
        assert _cfg(preset)["tie_word_embeddings"] is True
        assert symgpt.load(preset).flags["tied"] is True
    for preset in ("llama-3.1-8b", "qwen3-14b"):
        assert symgpt.load(preset).flags["tied"] is False


def test_kimi_k2_config_as_published_is_refused_in_one_line():
    with pytest.raises(SymgptError, match="unknown model_type 'kimi_k2'"):
        symgpt.load(CONFIGS / "kimi-k2-instruct.json")


#: the publishers' rounded totals (model cards): the exact count rounds to them at their precision
ROUNDED = {
    "mamba-130m": (130e6, 5e6),             # state-spaces: 130M
    "mamba-2.8b": (2.8e9, 0.05e9),          # state-spaces: 2.8B
    "falcon-mamba-7b": (7e9, 0.5e9),        # TII: 7B
    "jamba-1.5-mini": (52e9, 0.5e9),        # AI21 model card: 52B total parameters (12B active)
    "nemotron-h-8b": (8e9, 0.5e9),          # NVIDIA: 8B
    "qwen3-next-80b-a3b": (80e9, 0.5e9),    # Qwen model card: 80B in total (79B non-embedding)
    "lfm2-1.2b": (1.2e9, 0.05e9),           # Liquid AI: 1.2B
}


@pytest.mark.parametrize("preset", sorted(ROUNDED))
def test_count_rounds_to_the_published_total(preset):
    n = int(symgpt.load(preset).params.value)
    mid, tol = ROUNDED[preset]
    assert abs(n - mid) <= tol, (preset, n)


def test_qwen3_next_count_without_embeddings_is_the_published_79b():
    cfg = _cfg("qwen3-next-80b-a3b")
    n = int(symgpt.load("qwen3-next-80b-a3b").params.value)
    embeddings = 2 * cfg["vocab_size"] * cfg["hidden_size"]   # untied: input table and output head
    assert abs(n - embeddings - 79e9) <= 0.5e9


def test_lfm2_checkpoint_bytes_hold_the_count_in_bfloat16():
    """LiquidAI/LFM2-1.2B's model.safetensors is 2,340,697,936 bytes (the Hub listing copied with
    its config): two bytes a parameter plus the safetensors header (JSON, well under 1 MiB)."""
    n = int(symgpt.load("lfm2-1.2b").params.value)
    header = 2_340_697_936 - 2 * n
    assert 0 < header < 2 ** 20, header
