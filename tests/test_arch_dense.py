"""The dense decoders read from config.json (BLOOM, MPT, GPT-J, CodeGen, GPT-Neo, GPT-BigCode,
GPT-1, Cohere, Cohere2, StableLM, GLM-4, OLMo, EXAONE 4, Persimmon, Arcee, Jais 2, NanoChat, XGLM,
CTRL, BioGPT) on small non-default configurations, against transformers.

Oracles: ``sum(p.numel() for p in model.parameters())`` of ``AutoModelForCausalLM.from_config``
built on the meta device, and ``FlopCounterMode`` (eager attention) for one forward of B x T
token ids (tests/oracles/measure.py). The default configurations are in tests/test_zoo.py; these
reach what the defaults hide: the other value of each boolean field a reader maps to a flag,
widths that differ, layer patterns other than the default one, and (sliding windows) a T past
the window, where eager attention computes the full T x T square and symgpt the windowed band.
The two ops this group adds are checked against PyTorch's own saved tensors.
"""

from __future__ import annotations

import json

import pytest
import sympy
import torch

import symgpt
from oracles.measure import _hf_model, flop_count, param_count, saved_storages
from symgpt import SymgptError, ops
from symgpt.graph import roles
from symgpt.ops.base import Context

B, T = 2, 8

# model_type -> a small config (only the fields that differ from transformers' defaults)
SMALL = {
    "bloom": dict(hidden_size=64, n_layer=2, n_head=4, vocab_size=320),
    "bloom-untied": dict(model_type="bloom", hidden_size=64, n_layer=3, n_head=8, vocab_size=320,
                         tie_word_embeddings=False),
    "mpt": dict(d_model=64, n_layers=2, n_heads=4, vocab_size=320, max_seq_len=64),
    "gptj": dict(n_embd=64, n_layer=2, n_head=4, vocab_size=320, n_positions=64, rotary_dim=8),
    "gptj-inner": dict(model_type="gptj", n_embd=64, n_layer=2, n_head=2, vocab_size=320, n_positions=64,
                       rotary_dim=32, n_inner=96, tie_word_embeddings=True),
    "codegen": dict(n_embd=64, n_layer=2, n_head=4, vocab_size=320, n_positions=64, n_ctx=64, rotary_dim=4),
    "gpt_neo": dict(hidden_size=64, num_layers=4, num_heads=4, vocab_size=320, max_position_embeddings=64,
                    attention_types=[[["global", "local"], 2]], window_size=16),
    "gpt_neo-local-first": dict(model_type="gpt_neo", hidden_size=64, num_layers=6, num_heads=4, vocab_size=320,
                                max_position_embeddings=64, attention_types=[[["local", "local", "global"], 2]],
                                window_size=16, intermediate_size=80, tie_word_embeddings=False),
    "gpt_neo-all-global": dict(model_type="gpt_neo", hidden_size=64, num_layers=2, num_heads=4, vocab_size=320,
                               max_position_embeddings=64, attention_types=[[["global"], 2]]),
    "gpt_bigcode": dict(n_embd=64, n_layer=2, n_head=4, vocab_size=320, n_positions=64),
    "gpt_bigcode-mha": dict(model_type="gpt_bigcode", n_embd=64, n_layer=2, n_head=4, vocab_size=320,
                            n_positions=64, multi_query=False, n_inner=96),
    "openai-gpt": dict(n_embd=64, n_layer=2, n_head=4, vocab_size=320, n_positions=64),
    "cohere": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=320, attention_bias=True, logit_scale=0.125),
    "cohere2": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, vocab_size=320, sliding_window=16, tie_word_embeddings=False),
    "stablelm": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, vocab_size=320, use_qkv_bias=True, use_parallel_residual=True),
    "glm4": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=32, vocab_size=320, attention_bias=False, pad_token_id=0),
    "olmo": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=320, attention_bias=True),
    "exaone4": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=6, num_attention_heads=4,
                    num_key_value_heads=2, vocab_size=320, sliding_window=16, sliding_window_pattern=3),
    "persimmon": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                      vocab_size=320, qk_layernorm=False),
    "arcee": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=24, vocab_size=320, mlp_bias=True),
    "jais2": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                  vocab_size=320, attention_bias=False, mlp_bias=False, head_dim=16),
    "nanochat": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, vocab_size=320, final_logit_softcapping=None),
    "xglm": dict(d_model=64, ffn_dim=96, num_layers=2, attention_heads=4, vocab_size=320,
                 max_position_embeddings=64, scale_embedding=False),
    "ctrl": dict(n_embd=64, dff=96, n_layer=2, n_head=4, vocab_size=320, n_positions=64),
    "biogpt": dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                   vocab_size=320, max_position_embeddings=64),
}


def _config(case):
    cfg = dict(SMALL[case])
    cfg.setdefault("model_type", case)
    return cfg


def _load(cfg, tmp_path, **bound):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return symgpt.load(path, **bound)


@pytest.mark.parametrize("case", sorted(SMALL))
def test_params_and_forward_flops_equal_transformers(case, tmp_path):
    cfg = _config(case)
    hf = _hf_model(cfg, "meta", "eager")
    m = _load(cfg, tmp_path, B=B, T=T)
    assert m.params == param_count(hf), (case, m.params.value, param_count(hf))
    assert m.quantity("flops.forward") == flop_count(hf, B, T)


# (case, T past the window, W, windowed layers, heads, head dim)
WINDOWED = [("gpt_neo", 24, 16, 2, 4, 16), ("gpt_neo-local-first", 24, 16, 4, 4, 16),
            ("cohere2", 24, 16, 3, 4, 16), ("exaone4", 24, 16, 4, 4, 16)]


@pytest.mark.parametrize("case,t,W,windowed,heads,dh", WINDOWED)
def test_past_the_window_eager_counts_the_masked_band_of_the_windowed_layers_only(case, t, W, windowed, heads,
                                                                                    dh, tmp_path):
    """Eager attention computes every T x T score and masks the ones outside the window; symgpt
    counts the Min(T, W) keys of the sliding-window layers and all T of the full ones. The
    difference is exactly the band of the windowed layers: so the layer pattern is what the
    config says."""
    cfg = _config(case)
    hf = _hf_model(cfg, "meta", "eager")
    m = _load(cfg, tmp_path, B=B, T=t)
    band = windowed * 2 * 2 * B * heads * t * (t - W) * dh  # 2 matmuls, 2 FLOPs per multiply-add
    assert flop_count(hf, B, t) - m.quantity("flops.forward").value == band


def test_cohere2_and_exaone4_full_layers_have_no_rotary(tmp_path):
    # transformers' Cohere2Attention / Exaone4Attention apply RoPE on the sliding layers only
    for case in ("cohere2", "exaone4"):
        arch = _load(_config(case), tmp_path).arch
        rotary = [n for n in arch.graph.nodes if arch.graph.nodes[n].get("role") in (roles.QUERY_ROTARY,
                                                                                      roles.KEY_ROTARY)]
        assert rotary and all(n.startswith("blocks/") for n in rotary), (case, rotary)
        assert any(n.startswith("full_blocks/") for n in arch.graph.nodes)


def test_nanochat_norms_each_head_after_the_rotary(tmp_path):
    arch = _load(_config("nanochat"), tmp_path).arch
    order = list(arch.order)
    assert order.index("blocks/attention/q_rotary") < order.index("blocks/attention/q_norm")
    assert arch.graph.nodes["embedding/norm"]["role"] == roles.EMBEDDING_NORM


@pytest.mark.parametrize("case,changes,match", [
    ("mpt", {"expansion_ratio": 2}, "expansion_ratio"),
    ("mpt", {"attn_config": {"qk_ln": True}}, "qk_ln"),
    ("mpt", {"no_bias": False}, "no_bias"),
    ("gpt_neo", {"attention_types": [[["global", "local", "local"], 1], [["global"], 1]]}, "pattern"),
    ("gptj", {"rotary_dim": 6}, "whole percentage"),
    ("gptj", {"rotary_dim": None}, "rotary_dim"),
    ("gpt_bigcode", {"scale_attn_weights": False}, "scale_attn_weights"),
    ("cohere", {"use_qk_norm": True}, "use_qk_norm"),
    ("cohere", {"logit_scale": 0.3}, "logit_scale"),
    ("stablelm", {"qk_layernorm": True}, "qk_layernorm"),
    ("bloom", {"apply_residual_connection_post_layernorm": True}, "apply_residual"),
])
def test_what_is_not_modelled_is_refused_in_one_line(case, changes, match, tmp_path):
    with pytest.raises(SymgptError, match=match) as e:
        _load({**_config(case), **changes}, tmp_path).params
    assert "\n" not in str(e.value)


def test_olmo_clip_qkv_is_noted(tmp_path):
    m = _load({**_config("olmo"), "clip_qkv": 8.0}, tmp_path)
    assert any("clip_qkv" in n for n in m.notes)
    assert m.params == param_count(_hf_model({**_config("olmo"), "clip_qkv": 8.0}, "meta", "eager"))


# --- the ops: PyTorch's saved tensors --------------------------------------------------------------


def test_relu2_saves_one_tensor_as_transformers_activation_does():
    from transformers.activations import ACT2FN

    x = torch.randn(3, 5, requires_grad=True) * 1  # a non-leaf input, as inside a model
    shape = (sympy.Integer(3), sympy.Integer(5))
    op = ops.ReLU2()
    saved = saved_storages(ACT2FN["relu2"], x)
    rule = op.saved((shape,), shape, Context())
    assert len(saved) == len(rule) == 1 and rule[0].shares == ""  # neither x nor the output
    assert sum(saved.values()) == 3 * 5 * 4
    assert op.params((shape,)) == () and op.shape((shape,)) == shape


def test_parameter_free_norms_own_nothing_and_save_what_pytorch_saves():
    d = sympy.Integer(8)
    shape = (sympy.Integer(3), d)
    ln = ops.LayerNorm(d, affine=False)
    assert ln.params((shape,)) == () and "no parameters" in ln.describe()
    assert [p.shape for p in ops.LayerNorm(d).params((shape,))] == [(d,), (d,)]
    x = torch.randn(3, 8, requires_grad=True) * 1
    saved = saved_storages(lambda t: torch.nn.functional.layer_norm(t, (8,)), x)
    assert len(saved) == len(ln.saved((shape,), shape, Context()))  # x, mean, rstd
    rms = ops.RMSNorm(d, affine=False)
    assert rms.params((shape,)) == () and len(rms.saved((shape,), shape, Context())) == 2
    assert repr(ln) == repr(ops.LayerNorm(d))  # the digest of every existing graph stays as it was
