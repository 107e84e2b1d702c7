"""Lightning attention (``symgpt.ops.lightning``; the minimax family: transformers'
MiniMaxForCausalLM) against PyTorch on tiny CPU models (fp32, eager attention, its PyTorch path):
parameters and forward FLOPs (``FlopCounterMode``) at lengths within one block, filling it and
past it; after a prefill, ``inference.state`` against the bytes of ``MiniMaxCache.linear_cache``
and the KV cache against the attention layers' keys and values; a decode step's FLOPs against
``FlopCounterMode`` with that cache."""

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


MINIMAX = dict(vocab_size=64, hidden_size=32, intermediate_size=24, num_hidden_layers=4, num_attention_heads=4,
               num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2, block_size=4)

CASES = {
    "minimax": ("minimax", "MiniMaxForCausalLM", MINIMAX),
    "minimax-pattern": ("minimax", "MiniMaxForCausalLM",
                        dict(MINIMAX, num_hidden_layers=5, head_dim=6, tie_word_embeddings=True, block_size=3,
                             layer_types=["linear_attention", "linear_attention", "full_attention",
                                          "linear_attention", "full_attention"])),
    "minimax-factors": ("minimax", "MiniMaxForCausalLM",
                        dict(MINIMAX, num_hidden_layers=2, full_attn_alpha_factor=3.5, linear_attn_alpha_factor=3.5,
                             mlp_alpha_factor=3.5)),
}


def _model(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    klass = getattr(transformers, cls)
    # experts as batched_mm (one matmul per token and chosen expert), as the zoo table measures
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


@pytest.mark.parametrize("T,C", [(3, 4), (4, 4), (9, 4), (1, 4), (10, 3)])
def test_lightning_attention_flops_equal_the_blocked_algorithm(T, C):
    """The op against the module's own forward (no cache): its matmuls alone, the projections'
    (3 of d·H·d_h, output_gate and out_proj) subtracted as the hand count 2·T·(5·d·H·d_h)."""
    from transformers.models.minimax.modeling_minimax import MiniMaxLightningAttention

    cfg = transformers.MiniMaxConfig(hidden_size=12, num_attention_heads=2, head_dim=6, block_size=C,
                                     num_hidden_layers=2)
    mod = MiniMaxLightningAttention(cfg, 1).eval()
    Bn, d, H, dh = 2, 12, 2, 6
    x = torch.randn(Bn, T, d)
    measured = _flops(lambda: mod(x, None, None))
    projections = 2 * Bn * T * 5 * d * H * dh
    op = ops.LightningAttention(*(sympy.Integer(v) for v in (H, dh, C)))
    shapes = ((Bn, T, H * dh),) * 3
    out = op.shape(shapes)
    assert 2 * sum(w.count for w in op.forward(shapes, out) if w.kind == "matmul") == measured - projections
    Ts = sympy.Symbol("T", integer=True, positive=True)
    sym_shapes = ((Bn, Ts, H * dh),) * 3
    sym = 2 * sum(w.count for w in op.forward(sym_shapes, op.shape(sym_shapes)) if w.kind == "matmul")
    assert int(sym.subs(Ts, T)) == measured - projections
    assert op.params(shapes) == () and sum(p.numel() for p in mod.parameters()) == 5 * d * H * dh + H * dh


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [3, 8, 11])  # within a block, whole blocks, a shorter last block
def test_model_params_and_forward_flops(case, T, tmp_path):
    config, model = _model(*CASES[case])
    Bn = 2
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
    """(state bytes, key/value bytes) of a ``MiniMaxCache`` after a prefill: its ``linear_cache``
    (one state tensor per lightning layer, an empty list for the others) and its layers' keys and
    values (the attention layers')."""
    state = sum(t.nbytes for t in cache.linear_cache if isinstance(t, torch.Tensor))
    kv = 0
    for layer in cache.layers:
        for attr in ("keys", "values"):
            t = getattr(layer, attr, None)
            if isinstance(t, torch.Tensor):
                kv += t.nbytes
    return state, kv


@pytest.mark.parametrize("case", ["minimax", "minimax-pattern"])
@pytest.mark.parametrize("bf16", [False, True])
def test_state_and_kv_cache_equal_the_cache_transformers_returns(case, bf16, tmp_path):
    config, model = _model(*CASES[case])
    if bf16:
        model = model.to(torch.bfloat16)
    state, kv = _cache_bytes(_prefill(model))
    m = symgpt.load(_path(config, tmp_path), B=BATCH, T=PROMPT)
    bits = 16 if bf16 else 32
    assert state > 0 and kv > 0
    assert int(m.quantity("inference.state", kv_bits=bits).value) == state
    assert int(m.quantity("inference.kv_cache", kv_bits=bits).value) == kv


@pytest.mark.parametrize("case", ["minimax", "minimax-pattern"])
def test_decode_step_flops_equal_flopcountermode_with_the_cache(case, tmp_path):
    config, model = _model(*CASES[case])
    cache = _prefill(model)
    nxt = torch.full((BATCH, 1), 5)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        model(input_ids=nxt, cache=cache, use_cache=True)
    m = symgpt.load(_path(config, tmp_path), B=BATCH, T=PROMPT)
    assert int(m.quantity("inference.decode.flops").value) == fc.get_total_flops()


def test_the_convention_is_stated_on_the_answers(tmp_path):
    config, _ = _model(*CASES["minimax"])
    m = symgpt.load(_path(config, tmp_path))
    assert any("lightning attention" in n and "blocked algorithm" in n for n in m.quantity("flops.forward").notes)
    for name in ("inference.kv_cache", "inference.state", "inference.decode.flops"):
        assert any("recurrent layers keep a state of fixed size" in n for n in m.quantity(name).notes), name
    assert any("lightning attention at a decode step" in n for n in m.quantity("inference.decode.flops").notes)


def test_the_residual_weights_are_named_in_the_notes(tmp_path):
    config, _ = _model(*CASES["minimax-factors"])
    notes = symgpt.load(_path(config, tmp_path)).notes
    assert any("mlp_alpha_factor 3.5" in n for n in notes)


@pytest.mark.parametrize("field,value,words", [("sliding_window", 4, "sliding_window"),
                                               ("layer_types", ["linear_attention"] * 4, "every layer"),
                                               ("layer_types", ["sliding_attention"] * 4, "layer_types")])
def test_reader_refuses_what_it_does_not_model(field, value, words, tmp_path):
    config, _ = _model(*CASES["minimax"])
    path = _path(config, tmp_path)
    cfg = json.loads(open(path).read())
    cfg[field] = value
    with open(path, "w") as fh:
        json.dump(cfg, fh)
    with pytest.raises(SymgptError, match=words) as exc:
        symgpt.load(path)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("family", ["minimax"])
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


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [3, 8, 11])
def test_backward_flops_equal_flopcountermode(case, T, tmp_path):
    """The backward of a training forward (no cache): FlopCounterMode around loss.backward(),
    the loss the logits' sum (the gradients flow into every logit, as a cross-entropy's do)."""
    config, model = _model(*CASES[case])
    model.train()
    ids = torch.randint(0, 64, (1, T))
    loss = model(input_ids=ids, use_cache=False).logits.float().sum()
    with FlopCounterMode(display=False) as fc:
        loss.backward()
    m = symgpt.load(_path(config, tmp_path), B=1, T=T)
    assert int(m.quantity("flops.backward").value) == fc.get_total_flops()
