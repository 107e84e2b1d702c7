"""Decoders whose layers are of several kinds (``symgpt/families/blocks/kinds.py``): LFM2 and
LFM3 (short-convolution layers among attention layers; LFM3's sliding-window layers, per-head
gates and sandwich norms) and ModernBERT's decoder (a first layer without an attention norm,
full-attention layers among sliding-window ones, a prediction head). Oracle: the transformers
model built from the same small config on CPU -- ``sum(p.numel())`` and ``FlopCounterMode`` over
one eager forward at a T past the sliding window and the convolution's kernel (less the
masked band eager attention computes in a sliding-window layer, which symgpt does not count). The zoo's default
configs leave these features out (LFM2's default has no convolution layer) or FlopCounterMode
cannot run on the meta device (LFM's ``.item()``), so these configs check them."""

from __future__ import annotations

import json

import pytest

import symgpt

import torch
import transformers

IDS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # within the small vocabularies
CASES = {
    "lfm2-conv": ("Lfm2Config", "Lfm2ForCausalLM", dict(
        vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, full_attn_idxs=[1, 3], conv_L_cache=3, block_multiple_of=32)),
    "lfm2-bias-noadjust": ("Lfm2Config", "Lfm2ForCausalLM", dict(
        vocab_size=128, hidden_size=64, intermediate_size=80, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=1, layer_types=["conv", "full_attention", "conv"], conv_L_cache=4, conv_bias=True,
        block_auto_adjust_ff_dim=False, tie_word_embeddings=False)),
    "lfm2-multiplier": ("Lfm2Config", "Lfm2ForCausalLM", dict(
        vocab_size=96, hidden_size=32, intermediate_size=200, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, full_attn_idxs=[0], block_ffn_dim_multiplier=1.3, block_multiple_of=16)),
    "lfm3-default-pattern": ("Lfm3Config", "Lfm3ForCausalLM", dict(
        vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=6, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, **IDS, sliding_window=4, conv_L_cache=5)),
    "lfm3-plain": ("Lfm3Config", "Lfm3ForCausalLM", dict(
        vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4,
        num_key_value_heads=4, head_dim=8, **IDS, sliding_window=3, conv_L_cache=3, use_sandwich_norm=False,
        use_attention_gate=False, attention_bias=True, conv_bias=True,
        layer_types=["sliding_attention", "conv", "full_attention", "sliding_attention", "conv"])),
    "modernbert-decoder": ("ModernBertDecoderConfig", "ModernBertDecoderForCausalLM", dict(
        vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4,
        local_attention=8, **IDS)),
    "modernbert-decoder-biases": ("ModernBertDecoderConfig", "ModernBertDecoderForCausalLM", dict(
        vocab_size=128, hidden_size=64, intermediate_size=48, num_hidden_layers=4, num_attention_heads=2,
        local_attention=6, **IDS, attention_bias=True, mlp_bias=True, norm_bias=True, classifier_bias=True,
        decoder_bias=False, hidden_activation="silu", global_attn_every_n_layers=2)),
}
T = 12  # past every window (at most 4) and every kernel (at most 5)


def _oracle(config_cls, model_cls, kwargs):
    from torch.utils.flop_counter import FlopCounterMode
    cfg = getattr(transformers, config_cls)(**kwargs)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, model_cls)(cfg).eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.ones(1, T, dtype=torch.long)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    return cfg, params, fc.get_total_flops()


@pytest.mark.parametrize("case", sorted(CASES))
def test_params_and_forward_flops_equal_transformers(case, tmp_path):
    config_cls, model_cls, kwargs = CASES[case]
    cfg, params, flops = _oracle(config_cls, model_cls, kwargs)
    path = tmp_path / "config.json"
    path.write_text(cfg.to_json_string())
    data = json.loads(path.read_text())
    data["architectures"] = [model_cls]
    path.write_text(json.dumps(data))
    assert int(symgpt.load(path).params) == params
    # eager attention computes the masked band of a sliding-window layer too: T·(T - W) scores
    # per head and the same products with V, which symgpt's count (Min(T, W) keys) leaves out
    sliding = list(getattr(cfg, "layer_types", None) or []).count("sliding_attention")
    dh = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    band = sliding * 2 * 2 * cfg.num_attention_heads * T * (T - cfg.sliding_window) * dh if sliding else 0
    assert int(symgpt.load(path, B=1, T=T).quantity("flops.forward")) == flops - band


def test_short_conv_layers_are_their_own_stack(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "lfm2", "num_hidden_layers": 6, "full_attn_idxs": [2, 5],
                                "architectures": ["Lfm2ForCausalLM"]}))
    m = symgpt.load(path)
    assert m.flags["conv_layers"] == 4
    from symgpt.core.symbols import L
    from symgpt.families.blocks.kinds import kinds
    assert [(n, int(c.subs(L, 6).xreplace(m.bindings))) for n, c, _, _ in kinds(m.flags)] == \
        [("conv_blocks", 4), ("blocks", 2)]
