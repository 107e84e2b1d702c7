"""The state-space and linear-attention presets added beside tests/test_presets_published.py and
tests/test_presets_assembled.py, against the checkpoints' own totals where public records quote them.

Kimi-Linear-48B-A3B-Instruct: its safetensors hold 49,122,681,728 numbers (the Hub's
``safetensors.total``, printed by several public records, e.g. "Kimi-Linear-48B-A3B 49,122,681,728"
from the Hub API and a model report that sums the 20 shards' 20,493 tensors). That total counts the
26 MoE layers' ``e_score_correction_bias`` (256 each), which transformers' KimiLinear keeps as
buffers, not parameters: the checkpoint is transformers' parameters plus those buffers.
"""

import json
from pathlib import Path

import symgpt
from oracles.measure import _hf_model, param_count

PUBLISHED = Path(__file__).parent / "configs" / "published"


def test_kimi_linear_checkpoint_is_the_model_plus_its_correction_biases():
    cfg = json.loads((PUBLISHED / "kimi-linear-48b-a3b-instruct.json").read_text())
    model = _hf_model(cfg, "meta", "eager")
    biases = sum(b.numel() for n, b in model.named_buffers() if n.endswith("e_score_correction_bias"))
    moe_layers = cfg["num_hidden_layers"] - cfg["first_k_dense_replace"]
    assert biases == moe_layers * cfg["num_experts"] == 6_656
    n = param_count(model)
    assert n + biases == 49_122_681_728
    assert symgpt.load("kimi-linear-48b-a3b").params == n


def test_recurrentgemma_non_embedding_count_is_the_published_2b():
    """The RecurrentGemma report: "2B non-embedding parameters" (the tied 256,000 × 2,560 table apart)."""
    m = symgpt.load("recurrentgemma-2b")
    non_embedding = int(m.params.value) - 256_000 * 2_560
    assert abs(non_embedding - 2e9) <= 0.05e9
