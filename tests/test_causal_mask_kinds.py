"""The causal mask under ``causal_mask_saved``: one (T, T) boolean mask per layer, in every stack,
against what PyTorch keeps when tiny real transformers models run attention functions that apply
a mask in two ways (registered through transformers' ``AttentionInterface``; everything else in
the model is its own code):

- ``per_layer``: each call makes its (T, T) mask and applies it with ``masked_fill`` (nanoGPT's
  way, symgpt's convention): ``masked_fill`` keeps the mask, so L·T² bytes are kept -- whatever
  the layers' kinds: Gemma 2's sliding and full layers, DeepSeek's dense and MoE stacks, Qwen2-MoE's
  mixed layers, or one stack (Llama);
- ``shared``: the mask transformers' masking_utils builds once per forward for each attention kind
  (``create_causal_mask`` / the sliding-window one: a (B, 1, T, T) boolean) applied with
  ``torch.where``, which keeps it: one B·T² mask per kind, shared by all the layers of that kind
  (two for Gemma 2, one for the others). symgpt does not model this sharing: it is the named
  difference, pinned below.

Both are measured as the bytes kept beyond the same attention with an added float mask (an add
keeps nothing: transformers' own eager attention, ``causal_mask_saved=False`` in
tests/test_activations_families.py).
"""

import json

import pytest
import torch

import symgpt
from oracles.measure import saved_tensors
from test_activations_families import FAMILIES, _config

T, LAYERS = 7, 4
KINDS = {"llama": 1, "gemma2": 2, "deepseek_v3": 1, "qwen2_moe": 1}  # attention kinds transformers masks


def _core(q, k, v, scaling):
    n = q.shape[1] // k.shape[1]
    if n > 1:
        k, v = k.repeat_interleave(n, dim=1), v.repeat_interleave(n, dim=1)
    return (q @ k.transpose(-1, -2)) * (scaling if scaling is not None else q.shape[-1] ** -0.5), v


def _finish(s, v):
    p = torch.softmax(s, dim=-1)
    return (p @ v).transpose(1, 2).contiguous(), p


def _per_layer(module, q, k, v, attention_mask, scaling=None, dropout=0.0, **kw):
    s, v = _core(q, k, v, scaling)
    keep = torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).tril()  # made in this layer
    return _finish(s.masked_fill(~keep, float("-inf")), v)


def _added(module, q, k, v, attention_mask, scaling=None, dropout=0.0, **kw):
    s, v = _core(q, k, v, scaling)
    n = s.shape[-1]
    add = torch.zeros(n, n).masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return _finish(s + add, v)


def _shared(module, q, k, v, attention_mask, scaling=None, dropout=0.0, **kw):
    s, v = _core(q, k, v, scaling)
    return _finish(torch.where(attention_mask, s, torch.tensor(float("-inf"))), v)  # this kind's mask


@pytest.fixture(scope="module")
def registered():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    def boolean_mask(*args, **kwargs):  # the (B, 1, T, T) boolean, never skipped for is_causal
        return sdpa_mask(*args, **{**kwargs, "allow_is_causal_skip": False})

    for name, fn in (("symgpt_per_layer", _per_layer), ("symgpt_added", _added), ("symgpt_shared", _shared)):
        AttentionInterface.register(name, fn)
        AttentionMaskInterface.register(name, boolean_mask)


def _config4(case):
    model_type, cfg = _config(case, FAMILIES[case])
    cfg["num_hidden_layers"] = LAYERS
    if case == "qwen2_moe":
        cfg["mlp_only_layers"] = [1, 2]  # MoE, dense, dense, MoE
    return model_type, cfg


def _kept(model_type, cfg, attention, B):
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **cfg), attn_implementation=attention,
                                             experts_implementation="eager").float()
    torch.manual_seed(0)
    return sum(e["nbytes"] for e in saved_tensors(model, B, T, dtype=torch.float32, with_loss=False))


@pytest.mark.parametrize("case", sorted(KINDS))
def test_one_mask_per_layer_in_every_stack(case, registered, tmp_path):
    model_type, cfg = _config4(case)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, **cfg}))
    for B in (1, 2):
        added = _kept(model_type, cfg, "symgpt_added", B)
        m = symgpt.load(path, B=B, T=T, loss=False)
        opts = dict(convention="pytorch-cpu", precision="fp32")
        masks = (m.quantity("memory.activations", causal_mask_saved=True, **opts).value
                 - m.quantity("memory.activations", causal_mask_saved=False, **opts).value)
        assert masks == LAYERS * T * T  # by hand: one (T, T) boolean per layer
        assert _kept(model_type, cfg, "symgpt_per_layer", B) - added == masks
        # transformers' masks, one per attention kind, shared by its layers: not symgpt's convention
        assert _kept(model_type, cfg, "symgpt_shared", B) - added == KINDS[case] * B * T * T
