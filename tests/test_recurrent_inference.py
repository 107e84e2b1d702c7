"""Inference of state-space, linear-attention and short-convolution models (``derive.recurrent``)
against transformers on tiny CPU models (fp32, eager attention, its PyTorch paths):

* the cache: after a prefill (``model(input_ids, use_cache=True)``, its ``cache``, formerly
  ``past_key_values``) the ``DynamicCache`` holds,
  per layer, a ``LinearAttentionLayer`` (``conv_states`` (B, C, K) and ``recurrent_states``), a
  ``DynamicLayer`` (keys and values, (B, h_kv, T, d_head)), both at once (Falcon-H1's parallel
  layer), or a ``DummyLayer`` holding nothing (Nemotron-H's MLP and MoE layers). What is compared:
  the sum of ``nbytes`` of every conv and recurrent state tensor with ``inference.state``, and
  the sum of ``nbytes`` of every key and value tensor with ``inference.kv_cache`` (an fp32 model
  and a 32-bit cache; a bf16 model, whose SSM state stays fp32, and the default 16-bit cache);
* a decode step: ``FlopCounterMode`` around one more token's forward with that cache (``cache=``:
  under the deprecated ``past_key_values=`` a Mamba model starts a new cache; the matmul
  part: the causal conv1d's update is a conv1d it counts, the selective state updates' C·h a
  matmul and a bmm; the gated delta rule's recurrent step is elementwise, which it does not
  count) equals ``inference.decode.flops`` at the prompt's T;
* the decode step is constant in T for a model with no attention layer, and the prefill linear
  in T (its chunked scans aside, whose chunk counts are ceilings).
"""

import json

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import T

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

import test_gated_delta as gated  # noqa: E402
import test_hybrid as hybrid  # noqa: E402
import test_kinds as kinds  # noqa: E402
import test_ssm as ssm  # noqa: E402
import test_zamba as zamba  # noqa: E402

CASES = {
    **{k: ssm.CASES[k] for k in ("mamba", "falcon_mamba", "mamba2")},
    **{k: hybrid.CASES[k] for k in ("jamba", "bamba", "nemotron_h", "falcon_h1", "granitemoehybrid")},
    **gated.CASES,
    "lfm2-conv": kinds.CASES["lfm2-conv"],
    # shared transformer blocks among Mamba layers: a KV cache per use of the shared attention
    **zamba.CASES,
}

BATCH, PROMPT = 2, 7   # a prompt longer than every kernel (at most 4) and not a whole number of chunks


def _model(case):
    spec = CASES[case]
    if spec[0].endswith("Config"):  # the LFM2 cases: (config class, model class, kwargs)
        cfg = getattr(transformers, spec[0])(**spec[2])
        cfg._attn_implementation = "eager"
        cfg.architectures = [spec[1]]
        torch.manual_seed(0)
        return cfg, getattr(transformers, spec[1])(cfg).eval()
    return hybrid._model(*spec)


def _load(cfg, tmp_path):
    path = tmp_path / "config.json"
    data = json.loads(cfg.to_json_string(use_diff=False))
    data["architectures"] = list(cfg.architectures)
    path.write_text(json.dumps(data))
    return symgpt.load(str(path), B=BATCH, T=PROMPT)


def _prefill(model):
    torch.manual_seed(1)
    ids = torch.randint(3, 60, (BATCH, PROMPT))
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    cache = getattr(out, "cache", None)  # transformers 5's name; past_key_values before it
    return cache if cache is not None else out.past_key_values


def _cache_bytes(cache):
    """(state bytes, key/value bytes) of a transformers cache after a prefill (a sliding-window
    layer, ``DynamicSlidingWindowLayer``, keeps W - 1 positions, as symgpt's KV cache does:
    tests/test_kv_window.py)."""
    state = kv = 0
    for layer in cache.layers:
        for attr in ("conv_states", "recurrent_states"):
            for t in (getattr(layer, attr, None) or {}).values():
                if isinstance(t, torch.Tensor):
                    state += t.nbytes
        for attr in ("keys", "values"):
            t = getattr(layer, attr, None)
            if isinstance(t, torch.Tensor):
                kv += t.nbytes
    return state, kv


@pytest.mark.parametrize("case", sorted(CASES))
def test_state_and_kv_cache_equal_the_cache_transformers_returns(case, tmp_path):
    cfg, model = _model(case)
    state, kv = _cache_bytes(_prefill(model))
    m = _load(cfg, tmp_path)
    assert state > 0
    assert int(m.quantity("inference.state", kv_bits=32).value) == state
    assert int(m.quantity("inference.kv_cache", kv_bits=32).value) == kv
    assert int(m.quantity("memory.kv_cache", precision="fp32").value) == kv
    # inference.memory holds both, beside the weights and the largest activation
    parts = dict(m.quantity("inference.memory", kv_bits=32).breakdown)
    assert int(parts["state"].subs(m.bindings)) == state


@pytest.mark.parametrize("case", ["mamba", "mamba2", "jamba", "qwen3_next", "lfm2-conv"])
def test_a_bf16_model_keeps_its_ssm_state_in_fp32(case, tmp_path):
    """In a bf16 model transformers' cache holds the conv state and the keys and values in bf16,
    the SSM / delta-rule state in fp32 (its PyTorch path computes the update in float32):
    ``inference.state`` at the default 16-bit cache prices each so."""
    cfg, model = _model(case)
    model = model.to(torch.bfloat16)
    state, kv = _cache_bytes(_prefill(model))
    m = _load(cfg, tmp_path)
    assert int(m.quantity("inference.state").value) == state
    assert int(m.quantity("inference.kv_cache").value) == kv


@pytest.mark.parametrize("case", sorted(CASES))
def test_decode_step_flops_equal_flopcountermode_with_the_cache(case, tmp_path):
    cfg, model = _model(case)
    cache = _prefill(model)
    nxt = torch.full((BATCH, 1), 5)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=nxt, cache=cache, use_cache=True)
    m = _load(cfg, tmp_path)
    assert int(m.quantity("inference.decode.flops").value) == fc.get_total_flops()


@pytest.mark.parametrize("case", ["mamba", "mamba2", "falcon_mamba"])
def test_a_state_space_model_decodes_in_constant_time_and_memory(case, tmp_path):
    cfg, _ = _model(case)
    path = tmp_path / "config.json"
    path.write_text(cfg.to_json_string(use_diff=False))
    m = symgpt.load(str(path))
    for name in ("inference.decode.flops", "inference.decode.bytes", "inference.state"):
        assert not m.quantity(name).expr.has(T), name
    assert m.quantity("inference.kv_cache").expr == 0
    prefill = m.quantity("inference.prefill.flops").expr
    if not prefill.has(sympy.ceiling):  # Mamba-1: linear in T
        assert sympy.degree(sympy.expand(prefill), T) == 1


@pytest.mark.parametrize("case", ["jamba", "qwen3_next"])
def test_a_hybrid_decode_step_grows_with_its_attention_layers_only(case, tmp_path):
    """The decode step's T-dependent part is the attention layers' score and value reads: it is
    the same for the hybrid and for the hybrid with its recurrent layers' terms dropped."""
    cfg, _ = _model(case)
    path = tmp_path / "config.json"
    path.write_text(cfg.to_json_string(use_diff=False))
    m = symgpt.load(str(path))
    q = m.quantity("inference.decode.flops")
    grows = {p for p, e in q.breakdown if sympy.expand(e).has(T)}
    assert grows and all("attn" in p or "attention" in p for p in grows)
    assert sympy.degree(sympy.expand(q.expr), T) == 1
    assert sympy.degree(sympy.expand(m.quantity("inference.kv_cache").expr), T) == 1


@pytest.mark.parametrize("options,words", [({"convention": "scaling-book"}, "scaling-book"),
                                           ({"chips": 2}, "tensor parallelism")])
def test_what_is_not_modelled_refuses_in_one_line(options, words, tmp_path):
    cfg, _ = _model("mamba")
    m = _load(cfg, tmp_path)
    for name in ("inference.state", "inference.decode.flops", "inference.kv_cache"):
        with pytest.raises(SymgptError, match=words) as exc:
            m.quantity(name, **options)
        assert "not modelled for recurrent layers" in str(exc.value) and "\n" not in str(exc.value)


def test_a_transformer_has_no_state():
    m = symgpt.load("gpt2-small")
    q = m.quantity("inference.state")
    assert q.expr == 0 and "none" in q.notes[0]


def test_a_state_space_model_generates_with_its_state_alone():
    """Mamba has no KV cache, yet generates: G tokens after a prompt of P are the prefill plus
    G - 1 decode steps, each the same (constant in T)."""
    m = symgpt.load("examples/mamba-config.json", B=1)
    opts = dict(hardware="h100-sxm", prompt=512, generate=128)
    total = m.quantity("inference.generate.time", **opts).value
    prefill = symgpt.load("examples/mamba-config.json", B=1, T=512).quantity("inference.prefill.time",
                                                                            hardware="h100-sxm").value
    step = m.quantity("inference.decode.time", hardware="h100-sxm").value
    assert total == prefill + 127 * step
