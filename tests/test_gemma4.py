"""Gemma 4 (text) against transformers itself: ``Gemma4ForCausalLM`` and ``Gemma4UnifiedForCausalLM``.

Oracles: the zoo table (``tests/oracles/zoo/transformers-5.24.0.json``: the configuration class's
defaults built on the meta device), and small non-default configurations built with transformers
on CPU that exercise what the defaults hide -- KV sharing (``num_kv_shared_layers``), values from the
key projection (``attention_k_eq_v``) with their own key/value heads (``num_global_key_value_heads``),
the double-wide FFN of the sharing layers, per-layer embeddings with a table of their own height,
logit soft-capping, T past the sliding window: ``sum(p.numel() for p in model.parameters())``,
``FlopCounterMode``'s forward FLOPs, and the key/value tensors of the cache a forward returns (the
sharing layers hold none).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from symgpt import SymgptError
from symgpt.model.model import from_config

ZOO = json.loads((Path(__file__).parent / "oracles" / "zoo" / "transformers-5.24.0.json").read_text())["types"]
CLASSES = {"gemma4_text": "Gemma4ForCausalLM", "gemma4_unified_text": "Gemma4UnifiedForCausalLM"}
B = 2
SLIDING, FULL = "sliding_attention", "full_attention"
TINY = dict(vocab_size=97, hidden_size=32, intermediate_size=48, num_hidden_layers=9, num_attention_heads=4,
            num_key_value_heads=2, head_dim=8, sliding_window=4, layer_types=[SLIDING, SLIDING, FULL] * 3,
            global_head_dim=16, pad_token_id=0)
#: case -> (model type, fields beyond TINY, sliding-window layers, ids below)
SMALL = {
    "sharing": ("gemma4_text", dict(hidden_size_per_layer_input=6, vocab_size_per_layer_input=50,
                                    num_kv_shared_layers=4, use_double_wide_mlp=True, attention_k_eq_v=True,
                                    num_global_key_value_heads=1, final_logit_softcapping=30.0), 6, 50),
    "plain": ("gemma4_text", dict(hidden_size_per_layer_input=6, vocab_size_per_layer_input=97), 6, 97),
    "no-ple": ("gemma4_text", dict(hidden_size_per_layer_input=0, attention_k_eq_v=True), 6, 97),
    "unified": ("gemma4_unified_text", dict(num_kv_shared_layers=5, use_double_wide_mlp=True), 6, 97),
}


def _hf(model_type, fields):
    import transformers
    from transformers import AutoConfig
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hc = AutoConfig.for_model(model_type, **fields)
    model = getattr(transformers, CLASSES[model_type])._from_config(hc, attn_implementation="eager").float()
    cfg = hc.to_dict()
    cfg["architectures"] = [CLASSES[model_type]]
    return model, cfg


def _flops(model, T, top):
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=torch.randint(0, top, (B, T)), use_cache=False)
    return fc.get_total_flops()


@pytest.mark.parametrize("model_type", sorted(CLASSES))
def test_defaults_equal_transformers_default_count(model_type):
    # a config naming the class and nothing else reads the configuration class's defaults
    m = from_config({"model_type": model_type, "architectures": [CLASSES[model_type]]}, model_type)
    assert m.family.name == "gemma4"
    assert m.params.value == ZOO[model_type]["params"]
    assert m.with_(B=1, T=8).quantity("flops.forward").value == ZOO[model_type]["flops_forward"]


@pytest.mark.parametrize("case", sorted(SMALL))
def test_small_configs_params_and_flops_equal_transformers(case):
    model_type, fields, windowed, top = SMALL[case]
    hf, cfg = _hf(model_type, {**TINY, **fields})
    m = from_config(cfg, model_type)
    assert not [n for n in m.notes if "not understood" in n], m.notes
    assert m.params.value == sum(p.numel() for p in hf.parameters())
    assert m.with_(B=B, T=3).quantity("flops.forward").value == _flops(hf, 3, top)
    # past the window W = 4, eager attention computes every T x T score of the sliding layers and
    # masks those outside the window; symgpt counts the Min(T, W) keys: the difference is that band
    T, W, heads, dh = 9, 4, 4, 8
    band = windowed * 2 * 2 * B * heads * T * (T - W) * dh
    assert _flops(hf, T, top) - m.with_(B=B, T=T).quantity("flops.forward").value == band


@pytest.mark.parametrize("case", sorted(SMALL))
def test_kv_cache_is_what_transformers_keeps_and_sharing_layers_hold_none(case):
    model_type, fields, _, top = SMALL[case]
    hf, cfg = _hf(model_type, {**TINY, **fields})
    T = 3  # within the window (transformers' sliding layers keep W - 1 positions past it)
    with torch.no_grad():
        cache = hf(input_ids=torch.randint(0, top, (B, T)), use_cache=True).past_key_values
    held = [layer.keys.numel() + layer.values.numel() for layer in cache.layers
            if getattr(layer, "keys", None) is not None and layer.keys.numel()]
    shared = cfg.get("num_kv_shared_layers") or 0
    assert len(held) == TINY["num_hidden_layers"] - shared
    m = from_config(cfg, model_type).with_(B=B, T=T)
    assert m.quantity("memory.kv_cache").value == sum(held) * 4  # fp32


def test_sharing_layers_hold_no_key_or_value_weights():
    hf, cfg = _hf("gemma4_text", {**TINY, **SMALL["sharing"][1]})
    m = from_config(cfg, "gemma4_text")
    names = [n for n, _ in hf.named_parameters() if ".self_attn.k_proj" in n or ".self_attn.v_proj" in n]
    assert len([n for n in names if "k_proj" in n]) == 9 - 4
    assert len([n for n in names if "v_proj" in n]) == 9 - 4 - 1  # the full layer's values are its keys
    params = m.params.values()
    assert not [k for k in params if k.startswith("shared") and ("k_proj" in k or "v_proj" in k)]


def test_refusals_are_one_line():
    base = {"architectures": ["Gemma4ForCausalLM"]}
    for cfg, match in (
        ({"model_type": "gemma4_text", "enable_moe_block": True}, "enable_moe_block"),
        ({"model_type": "gemma4_text", "num_kv_shared_layers": 30}, "every layer reads keys and values"),
        ({"model_type": "gemma4_text", "use_bidirectional_attention": "all"}, "use_bidirectional_attention"),
        ({"model_type": "gemma4_text", "per_layer_config": {"5": {"intermediate_size": 10}}}, "intermediate_size"),
        ({"model_type": "gemma4_text", "per_layer_config": {"0": {"head_dim": 512}}}, "sliding-window layer 0"),
    ):
        with pytest.raises(SymgptError, match=match) as e:
            from_config({**base, **cfg}, "x")
        assert "\n" not in str(e.value)
