"""Kimi Delta Attention (``symgpt.ops.kda``; the kimi_linear and bailing_hybrid families:
transformers' KimiLinearForCausalLM and BailingHybridForCausalLM) against PyTorch: the op's FLOPs
against ``FlopCounterMode`` on transformers' ``chunk_kimi_delta_attention`` (the path it runs
without flash-linear-attention) within one chunk, filling it and past it; parameters and forward
FLOPs of tiny CPU models (fp32, eager attention); after a prefill, ``inference.state`` against the
conv and recurrent states of the cache transformers returns and the KV cache against the MLA
layers' cached latents and rotary keys; a decode step's FLOPs against ``FlopCounterMode`` with
that cache."""

import json

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt import ops
from symgpt.core.errors import SymgptError

import transformers


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        fn()
    return int(fcm.get_total_flops())


@pytest.mark.parametrize("T,chunk", [(5, 4), (8, 4), (3, 8), (1, 4), (70, 64)])
def test_kimi_delta_rule_flops_equal_the_chunked_algorithm(T, chunk):
    from transformers.models.kimi_linear.modeling_kimi_linear import chunk_kimi_delta_attention

    Bn, H, dk, dv = 2, 3, 4, 5
    q, k = torch.randn(Bn, T, H, dk), torch.randn(Bn, T, H, dk)
    v = torch.randn(Bn, T, H, dv)
    g, beta = -torch.rand(Bn, T, H, dk), torch.rand(Bn, T, H)
    measured = _flops(lambda: chunk_kimi_delta_attention(q, k, v, g=g, beta=beta, chunk_size=chunk,
                                                         use_qk_l2norm_in_kernel=True))
    op = ops.KimiDeltaRule(*(sympy.Integer(x) for x in (H, dk, dv, chunk)))
    shapes = ((Bn, T, H * dk), (Bn, T, H * dk), (Bn, T, H * dv), (Bn, T, H * dk), (Bn, T, H))
    out = op.shape(shapes)
    assert tuple(out) == (Bn, T, H * dv)
    assert 2 * sum(w.count for w in op.forward(shapes, out) if w.kind == "matmul") == measured
    Ts = sympy.Symbol("T", integer=True, positive=True)
    sym_shapes = tuple((Bn, Ts, s[-1]) for s in shapes)
    sym = 2 * sum(w.count for w in op.forward(sym_shapes, op.shape(sym_shapes)) if w.kind == "matmul")
    assert int(sym.subs(Ts, T)) == measured
    assert [(p.name, tuple(p.shape)) for p in op.params(shapes)] == [("A_log", (H,)), ("dt_bias", (H * dk,))]


MLA = dict(vocab_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, hidden_size=32, intermediate_size=40, moe_intermediate_size=16, num_attention_heads=4,
           num_key_value_heads=4, kv_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=4, v_head_dim=6,
           linear_num_heads=2, linear_head_dim=8, linear_conv_kernel_dim=3)

KIMI = dict(MLA, num_hidden_layers=5, num_experts=4, num_experts_per_token=2, num_expert_group=1, topk_group=1)
BAILING = dict(MLA, num_hidden_layers=5, num_experts=4, num_experts_per_token=2, num_expert_group=2, topk_group=1,
               first_k_dense_replace=2, layer_group_size=3, head_dim=8, short_conv_kernel_size=3)

CASES = {
    "kimi_linear": ("kimi_linear", "KimiLinearForCausalLM", KIMI),
    "kimi_linear-pattern": ("kimi_linear", "KimiLinearForCausalLM",
                            dict(KIMI, num_hidden_layers=4, q_lora_rank=12, num_shared_experts=2,
                                 layer_types=["full_attention", "linear_attention", "full_attention",
                                              "linear_attention"],
                                 mlp_layer_types=["dense", "dense", "sparse", "sparse"])),
    "bailing_hybrid": ("bailing_hybrid", "BailingHybridForCausalLM", BAILING),
}


def _model(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    klass = getattr(transformers, cls)
    kw = {"experts_implementation": "batched_mm"} if klass._can_set_experts_implementation() else {}
    torch.manual_seed(0)
    model = klass._from_config(config, attn_implementation="eager", **kw).eval()
    return config, model


def _path(config, tmp_path):
    path = tmp_path / "config.json"
    data = json.loads(config.to_json_string(use_diff=False))
    data["architectures"] = list(config.architectures)
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [8, 70])  # within one chunk of 64, and past it
def test_model_params_and_forward_flops(case, T, tmp_path):
    config, model = _model(*CASES[case])
    Bn = 1
    ids = torch.randint(0, 64, (Bn, T))
    measured = _flops(lambda: model(input_ids=ids, use_cache=False))
    m = symgpt.load(_path(config, tmp_path), B=Bn, T=T)
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    assert int(m.quantity("flops.forward").value) == measured


BATCH, PROMPT = 2, 7


def _prefill(model):
    torch.manual_seed(1)
    ids = torch.randint(3, 60, (BATCH, PROMPT))
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def _cache_bytes(cache):
    """(state bytes, cached key/value bytes): the linear layers' conv and recurrent states, the MLA
    layers' latents and rotary keys (held as a DynamicLayer's keys and values)."""
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
@pytest.mark.parametrize("bf16", [False, True])
def test_state_and_kv_cache_equal_the_cache_transformers_returns(case, bf16, tmp_path):
    """fp32, and bf16 with the default 16-bit cache: the conv state and the cached latents at the
    model's dtype, the delta-rule state in fp32 (transformers' cache casts it)."""
    config, model = _model(*CASES[case])
    if bf16:
        model = model.to(torch.bfloat16)
    state, kv = _cache_bytes(_prefill(model))
    m = symgpt.load(_path(config, tmp_path), B=BATCH, T=PROMPT)
    bits = 16 if bf16 else 32
    assert state > 0 and kv > 0
    assert int(m.quantity("inference.state", kv_bits=bits).value) == state
    assert int(m.quantity("inference.kv_cache", kv_bits=bits).value) == kv


@pytest.mark.parametrize("case", sorted(CASES))
def test_decode_step_flops_equal_flopcountermode_with_the_cache(case, tmp_path):
    config, model = _model(*CASES[case])
    cache = _prefill(model)
    nxt = torch.full((BATCH, 1), 5)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=nxt, cache=cache, use_cache=True)
    m = symgpt.load(_path(config, tmp_path), B=BATCH, T=PROMPT)
    assert int(m.quantity("inference.decode.flops").value) == fc.get_total_flops()


def test_the_convention_is_stated_on_the_answers(tmp_path):
    config, _ = _model(*CASES["kimi_linear"])
    m = symgpt.load(_path(config, tmp_path))
    assert any("Kimi delta attention" in n and "chunked algorithm" in n for n in m.quantity("flops.forward").notes)
    for name in ("inference.kv_cache", "inference.state", "inference.decode.flops"):
        assert any("recurrent layers keep a state of fixed size" in n for n in m.quantity(name).notes), name


def test_kimi_linear_reads_the_released_linear_attn_config(tmp_path):
    """The released config.json names its layers in ``linear_attn_config`` (1-indexed), as
    KimiLinearConfig reads them: the same model as ``layer_types``."""
    config, model = _model("kimi_linear", "KimiLinearForCausalLM",
                           dict(KIMI, linear_attn_config={"full_attn_layers": [2, 5], "kda_layers": [1, 3, 4],
                                                          "num_heads": 2, "head_dim": 8,
                                                          "short_conv_kernel_size": 3}))
    assert config.layer_types[1] == "full_attention"
    data = json.loads(open(_path(config, tmp_path)).read())
    data.pop("layer_types")
    path = tmp_path / "released.json"
    path.write_text(json.dumps(data))
    assert int(symgpt.load(str(path)).params.value) == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("field,value,words", [("mlp_layer_types", ["sparse", "dense", "sparse", "sparse", "sparse"],
                                                "mlp_layer_types"),
                                               ("layer_types", ["linear_attention"] * 5, "layer_types"),
                                               ("num_key_value_heads", 2, "num_key_value_heads")])
def test_reader_refuses_what_it_does_not_model(field, value, words, tmp_path):
    config, _ = _model(*CASES["kimi_linear"])
    path = _path(config, tmp_path)
    cfg = json.loads(open(path).read())
    cfg[field] = value
    with open(path, "w") as fh:
        json.dump(cfg, fh)
    with pytest.raises(SymgptError, match=words) as exc:
        symgpt.load(path)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("family", ["kimi_linear", "bailing_hybrid"])
def test_every_op_has_a_role_and_only_attention_layers_cache(family):
    """Every op declares its role; the KV cache's nodes stand in the attention stacks only, the
    linear-attention stacks hold the recurrent op instead."""
    from symgpt.core.symbols import L
    from symgpt.derive.recurrent import recurrent_ops
    from symgpt.graph import roles

    arch = symgpt.load(family).arch
    assert [n for n, a in arch.ops() if arch.role(n) is None] == []
    stacks = arch.stacks()
    assert sympy.simplify(sum(g.repeat for g in stacks) - L) == 0
    cached = roles.LATENT_CACHE if arch.find(roles.KV_LATENT) else roles.PLAIN_CACHE
    recurrent = set(recurrent_ops(arch))
    for g in stacks:
        linear = "linear" in g.name
        assert all(bool(arch.find(r, stack=g.name)) != linear for r in cached), g.name
        assert any(n.startswith(g.name + "/") for n in recurrent) == linear, g.name


@pytest.mark.parametrize("T,chunk", [(5, 4), (8, 4), (11, 64), (70, 64)])
def test_kimi_delta_rule_backward_equals_autograd(T, chunk):
    """The autograd of chunk_kimi_delta_attention: twice the forward's products, less those of the
    first chunk's zero state and of the last chunk's unused state update."""
    from transformers.models.kimi_linear.modeling_kimi_linear import chunk_kimi_delta_attention

    Bn, H, dk, dv = 2, 3, 4, 5
    q, k = torch.randn(Bn, T, H, dk, requires_grad=True), torch.randn(Bn, T, H, dk, requires_grad=True)
    v = torch.randn(Bn, T, H, dv, requires_grad=True)
    g, beta = (-torch.rand(Bn, T, H, dk)).requires_grad_(), torch.rand(Bn, T, H).requires_grad_()
    o, _ = chunk_kimi_delta_attention(q, k, v, g=g, beta=beta, chunk_size=chunk, use_qk_l2norm_in_kernel=True)
    with FlopCounterMode(display=False) as fc:
        o.sum().backward()
    op = ops.KimiDeltaRule(*(sympy.Integer(x) for x in (H, dk, dv, chunk)))
    shapes = ((Bn, T, H * dk), (Bn, T, H * dk), (Bn, T, H * dv), (Bn, T, H * dk), (Bn, T, H))
    out = op.shape(shapes)
    assert 2 * sum(w.count for w in op.backward(shapes, out, None) if w.kind == "matmul") == fc.get_total_flops()


@pytest.mark.parametrize("case", sorted(CASES))
def test_backward_flops_equal_flopcountermode_but_the_depthwise_conv(case, tmp_path):
    """A training step's backward (no cache) against FlopCounterMode around loss.backward(), the
    depthwise conv1d's aside: FlopCounterMode prices its input gradient as a dense convolution
    (C_in·C_out per position, not C per position), so both sides leave the conv out."""
    config, model = _model(*CASES[case])
    model.train()
    T = 11
    ids = torch.randint(0, 64, (1, T))
    loss = model(input_ids=ids, use_cache=False).logits.float().sum()
    with FlopCounterMode(display=False) as fc:
        loss.backward()
    measured = sum(n for op, n in fc.get_flop_counts()["Global"].items() if "convolution" not in str(op))
    m = symgpt.load(_path(config, tmp_path), B=1, T=T)
    q = m.quantity("flops.backward")
    conv = sum(int(e.subs(m.bindings)) for p, e in q.breakdown if p.endswith("/conv1d"))
    assert conv > 0
    assert int(q.value) - conv == measured
