"""The presets bamba-9b and granite-4.0-h-tiny (symgpt.families.hybrid) against their
assembled files (tests/configs/assembled/, sources in tests/configs/README.md).

Oracles: transformers' class named in the file's ``architectures``, built from it on the meta
device (``sum(p.numel())``); Granite 4.0-H-Tiny's checkpoint total (6,939,037,248, the Hub's
safetensors metadata of ibm-granite/granite-4.0-h-tiny-base as two public records print it); for
Bamba-9B, whose exact total no public record was found to hold, the shape fields IBM's own code
declares for the checkpoint (foundation-model-stack ``fms/models/bamba.py`` ``_bamba_9_8b_config``,
commit 062adf6e1111850aa1c2abf7a678cfb95e35f59a), and the 9.78B of foundation-model-stack/bamba's
model table (commit c94056b4a2e78683ef3b3039c3943373cf7b3ec6).
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

#: preset -> its assembled file
FILES = {"bamba-9b": "bamba-9b.json", "granite-4.0-h-tiny": "granite-4.0-h-tiny.json"}


def _file(preset):
    return json.loads((CONFIGS / FILES[preset]).read_text())


def _build(cfg):
    hf_logging.set_verbosity_error()
    cfg = dict(cfg)
    cls = getattr(transformers, cfg["architectures"][0])
    hf_cfg = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    with torch.device("meta"):
        model = cls(hf_cfg)
    model.tie_weights()
    return model


@pytest.mark.parametrize("preset", sorted(FILES))
def test_preset_is_its_file_and_counts_what_transformers_counts(preset, tmp_path):
    path = tmp_path / FILES[preset]
    path.write_text(json.dumps(_file(preset)))
    p, c = symgpt.load(preset), symgpt.load(path)
    assert p.family is c.family and p.family.name == "hybrid"
    assert dict(p.sizes) == dict(c.sizes) and p.flags == c.flags
    n = param_count(_build(_file(preset)))
    assert p.params == n, (preset, p.params.value, n)
    assert f"{n:,}" in symgpt.families.presets()[preset].note


def test_granite_tiny_file_holds_the_checkpoint_total():
    """ibm-granite/granite-4.0-h-tiny-base (revision f95c8e83b06c12f877486f18d2e2d109ab252bd0):
    safetensors metadata 6,939,037,248; its three bfloat16 shards sum to 13,878,142,256 bytes,
    two a number plus the headers."""
    n = param_count(_build(_file("granite-4.0-h-tiny")))
    assert n == 6_939_037_248
    assert 0 < 13_878_142_256 - 2 * n < 3 * 2 ** 20


def test_granite_tiny_file_is_its_model_card():
    """The architecture table of the model card (H Tiny MoE column): embedding 1,536; 4 attention /
    36 Mamba2 layers; attention heads 12 of 128, 4 KV heads; Mamba2 state 128, 48 heads; shared
    expert 1,024; 64 experts, 6 active, of 512; NoPE; shared input/output embeddings."""
    cfg = _file("granite-4.0-h-tiny")
    card = {"hidden_size": 1536, "num_attention_heads": 12, "num_key_value_heads": 4, "mamba_d_state": 128,
            "mamba_n_heads": 48, "shared_intermediate_size": 1024, "num_local_experts": 64,
            "num_experts_per_tok": 6, "intermediate_size": 512, "tie_word_embeddings": True,
            "position_embedding_type": "nope"}
    assert {k: cfg[k] for k in card} == card
    assert cfg["layer_types"].count("attention") == 4 and cfg["layer_types"].count("mamba") == 36
    assert cfg["hidden_size"] // cfg["num_attention_heads"] == 128
    # the Mamba-2 width: expand 2 (GraniteMoeHybridConfig's default), so 48 heads of 64
    assert cfg["mamba_n_heads"] * cfg["mamba_d_head"] == cfg["mamba_expand"] * cfg["hidden_size"]


def test_bamba_file_is_ibms_own_declaration_and_rounds_to_its_published_total():
    cfg = _file("bamba-9b")
    # fms/models/bamba.py, _bamba_9_8b_config: src_vocab_size, emb_dim, kvheads, nlayers, nheads,
    # head_dim (of the Mamba heads), n_groups, hidden_grow_factor 3.5, mamba_expand, state_size,
    # conv_kernel, chunk_size, attn_layer_indices, mamba_n_heads, tie_heads False
    fms = {"vocab_size": 128256, "hidden_size": 4096, "num_key_value_heads": 8, "num_hidden_layers": 32,
           "num_attention_heads": 32, "mamba_d_head": 64, "mamba_n_groups": 1, "intermediate_size": 4096 * 7 // 2,
           "mamba_expand": 2, "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_chunk_size": 256,
           "attn_layer_indices": [9, 18, 27], "mamba_n_heads": 128, "tie_word_embeddings": False,
           "mamba_conv_bias": True}
    assert {k: cfg[k] for k in fms} == fms
    # fms-fsdp's attn_cfg for mamba_9.8b: rotary_emb_dim 64 of head_dim 128
    assert cfg["rope_parameters"]["partial_rotary_factor"] == pytest.approx(64 / 128)
    n = int(symgpt.load("bamba-9b").params.value)
    assert round(n / 10 ** 7) == 978      # foundation-model-stack/bamba: "9B (9.78B)"
