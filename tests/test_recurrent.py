"""Recurrent layers (``symgpt.ops.rwkv``; the rwkv family: transformers' RwkvForCausalLM) against
PyTorch: the ops' parameters against the real modules, their matmul work against
``torch.utils.flop_counter.FlopCounterMode``, their elementwise work against the arithmetic
transformers' step-by-step loop runs (every elementwise aten op's output elements, counted under a
dispatch mode), the hf-eager saved rule against ``saved_tensors_hooks`` on the loop; whole models'
parameters and forward FLOPs on small non-default configs. Their inference (the state and the decode
step): tests/test_recurrent_state.py."""

import json

import pytest
import sympy
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt import ops
from symgpt.core.errors import SymgptError
from symgpt.ops.base import Context

import transformers

#: the aten ops that do arithmetic on each element of their output
ARITHMETIC = {"add", "sub", "rsub", "mul", "div", "exp", "neg", "maximum", "sigmoid", "tanh", "log", "softplus",
              "pow", "sqrt", "rsqrt", "reciprocal", "abs", "minimum", "log1p", "exp2", "log_sigmoid_forward",
              "baddbmm"}  # baddbmm: its bias add (its product is FlopCounterMode's)


class ElementwiseCount(TorchDispatchMode):
    """The output elements of every arithmetic aten op run inside."""

    def __init__(self):
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        first = out[0] if isinstance(out, tuple) else out  # log_sigmoid_forward: (output, buffer)
        if func.overloadpacket.__name__.rstrip("_") in ARITHMETIC and isinstance(first, torch.Tensor):
            self.total += first.numel()
        return out


def _flops(fn, backward=False) -> int:
    with FlopCounterMode(display=False) as fcm, torch.set_grad_enabled(backward):
        out = fn()
        if backward:
            out.sum().backward()
    return int(fcm.get_total_flops())


def _work(rule, kind):
    return sum(int(w.count) for w in rule if w.kind == kind)


def _saved_bytes(fn) -> int:
    """The storages autograd saves while *fn* runs (each once), parameters aside."""
    seen = {}

    def pack(t):
        if not isinstance(t, torch.nn.Parameter):
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(seen.values())


def _rule_bytes(saved, sizes) -> int:
    width = {"act": 4, "fp32": 4, "bool": 1, "int64": 8}
    return sum(int(sympy.Mul(*s.shape).subs(sizes)) * width[s.dtype] for s in saved)


# --- RWKV's WKV -------------------------------------------------------------------------------

@pytest.mark.parametrize("Bn,T,A", [(2, 5, 3), (1, 7, 4), (3, 1, 2)])
def test_wkv_against_transformers_loop(Bn, T, A):
    from transformers.models.rwkv.modeling_rwkv import rwkv_linear_attention_cpu

    torch.manual_seed(0)
    w, u = torch.nn.Parameter(torch.randn(A)), torch.nn.Parameter(torch.randn(A))
    k, v = torch.randn(Bn, T, A, requires_grad=True), torch.randn(Bn, T, A, requires_grad=True)
    op = ops.WKV(sympy.Integer(A))
    shapes = ((Bn, T, A), (Bn, T, A))
    out = op.shape(shapes)
    assert tuple(out) == (Bn, T, A)
    assert [(p.name, tuple(p.shape)) for p in op.params(shapes)] == [("time_decay", (A,)), ("time_first", (A,))]
    # no matmul, forward or backward
    run = lambda: rwkv_linear_attention_cpu(w, u, k, v)[0]  # noqa: E731
    assert _work(op.forward(shapes, out), "matmul") == 0 == _flops(run) == _flops(run, backward=True)
    # the elementwise work is the loop's arithmetic
    with ElementwiseCount() as count, torch.no_grad():
        run()
    assert _work(op.forward(shapes, out), "elementwise") == count.total
    # hf-eager: what autograd keeps of the loop
    saved = op.saved(shapes, out, Context(needs_grad=(True, True), implementation="hf-eager"))
    assert _rule_bytes(saved, {}) == _saved_bytes(run)


def test_wkv_parameters_are_the_time_mix_modules():
    from transformers.models.rwkv.modeling_rwkv import RwkvSelfAttention

    config = transformers.RwkvConfig(hidden_size=12, attention_hidden_size=8)
    module = RwkvSelfAttention(config)
    op = ops.WKV(sympy.Integer(8))
    assert {p.name: tuple(p.shape) for p in op.params(((1, 3, 8),) * 2)} == \
        {n: tuple(module.get_parameter(n).shape) for n in ("time_decay", "time_first")}
    mix = ops.TokenShiftMix(sympy.Integer(12), param="time_mix_key")
    assert {p.name: tuple(p.shape) for p in mix.params(((1, 3, 12),))} == \
        {"time_mix_key": tuple(module.time_mix_key.shape)}


@pytest.mark.parametrize("Bn,T,C", [(2, 5, 3), (1, 1, 4)])
def test_token_shift_mix_against_transformers_code(Bn, T, C):
    """x·μ + shift(x)·(1 - μ) as RwkvSelfAttention.extract_key_value writes it."""
    shift = torch.nn.ZeroPad2d((0, 0, 1, -1))
    mu = torch.nn.Parameter(torch.rand(1, 1, C))
    x = torch.randn(Bn, T, C, requires_grad=True)
    run = lambda: x * mu + shift(x) * (1 - mu)  # noqa: E731
    op = ops.TokenShiftMix(sympy.Integer(C))
    out = op.shape(((Bn, T, C),))
    with ElementwiseCount() as count, torch.no_grad():
        run()
    assert _work(op.forward(((Bn, T, C),), out), "elementwise") == count.total
    assert _flops(run) == 0
    saved = op.saved(((Bn, T, C),), out, Context(needs_grad=(True,), implementation="hf-eager"))
    assert _rule_bytes(saved, {}) == _saved_bytes(run)


# --- RecurrentGemma's RG-LRU ------------------------------------------------------------------

@pytest.mark.parametrize("Bn,T,W,H", [(2, 5, 8, 2), (1, 3, 6, 3), (2, 1, 4, 1)])
def test_rglru_against_transformers_module(Bn, T, W, H):
    from transformers.models.recurrent_gemma.modeling_recurrent_gemma import RecurrentGemmaRglru

    config = transformers.RecurrentGemmaConfig(hidden_size=2 * W, lru_width=W, num_attention_heads=H)
    torch.manual_seed(0)
    module = RecurrentGemmaRglru(config)
    for p in module.parameters():
        torch.nn.init.normal_(p)
    x = torch.randn(Bn, T, W, requires_grad=True)
    pos = torch.arange(T)[None].expand(Bn, T)

    def run():
        module.recurrent_states = None
        return module(x, pos)

    op = ops.RGLRU(sympy.Integer(W), sympy.Integer(H))
    out = op.shape(((Bn, T, W),))
    assert {p.name: tuple(p.shape) for p in op.params(((Bn, T, W),))} == \
        {n: tuple(p.shape) for n, p in module.named_parameters()}
    assert 2 * _work(op.forward(((Bn, T, W),), out), "matmul") == _flops(run)
    back = op.backward(((Bn, T, W),), out, Context(needs_grad=(True,), trainable=True))
    assert 2 * (_work(op.forward(((Bn, T, W),), out), "matmul") + _work(back, "matmul")) == _flops(run, backward=True)
    with ElementwiseCount() as count, torch.no_grad():
        run()
    assert _work(op.forward(((Bn, T, W),), out), "elementwise") == count.total
    saved = op.saved(((Bn, T, W),), out, Context(needs_grad=(True,), implementation="hf-eager"))
    assert _rule_bytes(saved, {}) == _saved_bytes(run)


# --- xLSTM's mLSTM cell -----------------------------------------------------------------------

@pytest.mark.parametrize("Bn,T,H,a,b,Q", [(2, 5, 2, 3, 4, 4), (1, 8, 2, 3, 2, 4), (2, 11, 3, 2, 3, 4),
                                          (1, 1, 2, 3, 4, 4), (2, 4, 1, 2, 2, 4)])
def test_mlstm_against_transformers_backend(Bn, T, H, a, b, Q):
    """Whole chunks chunkwise and the rest step by step (T = 11, Q = 4: two chunks, three steps)."""
    from transformers.models.xlstm.modeling_xlstm import xLSTMBackend

    backend = xLSTMBackend(transformers.xLSTMConfig(hidden_size=16, num_heads=H, chunk_size=Q))
    torch.manual_seed(0)
    q, k, v = torch.randn(Bn, H, T, a), torch.randn(Bn, H, T, a), torch.randn(Bn, H, T, b)
    i, f = torch.randn(Bn, H, T), torch.randn(Bn, H, T)
    run = lambda: backend(query=q, key=k, value=v, igate=i, fgate=f)  # noqa: E731
    op = ops.MLSTM(*(sympy.Integer(x) for x in (H, H * a, H * b, Q)))
    shapes = ((Bn, T, H * a), (Bn, T, H * a), (Bn, T, H * b), (Bn, T, H), (Bn, T, H))
    out = op.shape(shapes)
    assert tuple(out) == (Bn, T, H * b) and op.params(shapes) == ()
    assert 2 * _work(op.forward(shapes, out), "matmul") == _flops(run)
    with ElementwiseCount() as count, torch.no_grad():
        run()
    assert _work(op.forward(shapes, out), "elementwise") == count.total
    # kept symbolic in T, evaluated afterwards
    Ts = sympy.Symbol("T", integer=True, positive=True)
    sym = op.forward(tuple((Bn, Ts, s[-1]) for s in shapes), (Bn, Ts, H * b))
    assert 2 * int(sum(w.count for w in sym if w.kind == "matmul").subs(Ts, T)) == _flops(run)


# --- whole models ----------------------------------------------------------------------------

RWKV = dict(hidden_size=24, num_hidden_layers=3, vocab_size=64, attention_hidden_size=16, intermediate_size=40)

CASES = {
    "rwkv": ("rwkv", "RwkvForCausalLM", RWKV),
    "rwkv-tied-defaults": ("rwkv", "RwkvForCausalLM", dict(hidden_size=16, num_hidden_layers=2, vocab_size=50,
                                                           tie_word_embeddings=True, rescale_every=1)),
    # GQA, a window the sequence passes, an LRU wider than d, biases, untied, a pattern not of three
    "recurrent_gemma": ("recurrent_gemma", "RecurrentGemmaForCausalLM",
                        dict(hidden_size=24, num_hidden_layers=5, vocab_size=64, intermediate_size=40,
                             num_attention_heads=4, num_key_value_heads=2, lru_width=32, attention_window_size=4,
                             conv1d_width=3, block_types=["recurrent", "attention"], attention_bias=True,
                             tie_word_embeddings=False, logits_soft_cap=20.0)),
    "recurrent_gemma-all-recurrent": ("recurrent_gemma", "RecurrentGemmaForCausalLM",
                                      dict(hidden_size=16, num_hidden_layers=2, vocab_size=50, intermediate_size=24,
                                           num_attention_heads=2, block_types=["recurrent"])),
    "recurrent_gemma-defaults-pattern": ("recurrent_gemma", "RecurrentGemmaForCausalLM",
                                         dict(hidden_size=16, num_hidden_layers=4, vocab_size=50,
                                              intermediate_size=24, num_attention_heads=2)),
    # chunks of 4 (T = 7: one chunk and three steps), other widths; biases, tie_word_embeddings (which
    # xLSTMForCausalLM does not honour: no tied weights), other soft caps
    "xlstm": ("xlstm", "xLSTMForCausalLM", dict(hidden_size=32, num_hidden_layers=2, vocab_size=64, num_heads=4,
                                                chunk_size=4, qk_dim_factor=0.25, v_dim_factor=0.5,
                                                ffn_proj_factor=1.5, ffn_round_up_to_multiple_of=16)),
    "xlstm-bias-tied": ("xlstm", "xLSTMForCausalLM",
                              dict(hidden_size=16, num_hidden_layers=2, vocab_size=50, num_heads=2, chunk_size=2,
                                   use_bias=True, tie_word_embeddings=True,
                                   output_logit_soft_cap=20.0, gate_soft_cap=10.0)),
}


def _model(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    torch.manual_seed(0)
    return config, getattr(transformers, cls)._from_config(config, attn_implementation="eager").eval()


def _config_file(config, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    return str(path)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [1, 7])
def test_model_params_and_forward_flops(case, T, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, model = _model(model_type, cls, overrides)
    Bn = 2
    ids = torch.randint(0, 50, (Bn, T))
    measured = _flops(lambda: model(input_ids=ids, use_cache=False).logits)
    m = symgpt.load(_config_file(config, tmp_path), B=Bn, T=T)
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    # past the window, eager attention computes the full T x T square of each local-attention layer
    # and symgpt the Min(T, W) band (tests/test_arch_dense.py): the difference is that band exactly
    band = 0
    if model_type == "recurrent_gemma" and T > config.attention_window_size:
        local = config.layers_block_type.count("sliding_attention")
        band = local * 2 * 2 * Bn * config.num_attention_heads * T * (T - config.attention_window_size) * \
            config.head_dim
    assert int(m.quantity("flops.forward").value) == measured - band


@pytest.mark.parametrize("case,words", [("rwkv", "rwkv_linear_attention_cpu"),
                                        ("recurrent_gemma", "RecurrentGemmaRglru._rnn_scan"),
                                        ("xlstm", "wrap_chunkwise_arbitrary_sequence_length")])
def test_the_recurrence_convention_is_stated_on_the_answer(case, words, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, _ = _model(model_type, cls, overrides)
    notes = symgpt.load(_config_file(config, tmp_path)).quantity("flops.forward").notes
    assert any(words in n for n in notes)


@pytest.mark.parametrize("field,value", [("mode", "train"), ("weight_mode", "fused")])
def test_xlstm_refuses_what_it_does_not_model_in_one_line(field, value, tmp_path):
    config, _ = _model(*CASES["xlstm"])
    cfg = json.loads(config.to_json_string(use_diff=False))
    cfg[field] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(SymgptError, match=field) as exc:
        symgpt.load(str(path))
    assert "\n" not in str(exc.value)
