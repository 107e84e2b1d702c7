"""State-space layers (``symgpt.ops.ssm``; the mamba family: transformers' MambaForCausalLM,
FalconMambaForCausalLM, Mamba2ForCausalLM) against PyTorch: parameters of the real modules,
forward FLOPs against ``torch.utils.flop_counter.FlopCounterMode`` on tiny CPU models run on
transformers' PyTorch path (the sequential selective scan; the chunked SSD scan with a sequence
that does not fill its last chunk), and the inference answers naming the recurrent state."""

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


def _count(op, *shapes):
    out = op.shape(shapes)
    macs = sum(w.count for w in op.forward(shapes, out) if w.kind == "matmul")
    return int(2 * macs), out


# --- the ops on their own ---------------------------------------------------------------------

@pytest.mark.parametrize("channels,kernel,T", [(6, 4, 5), (10, 3, 1), (8, 2, 9)])
def test_causal_conv1d_params_and_flops(channels, kernel, T):
    conv = torch.nn.Conv1d(channels, channels, kernel, groups=channels, padding=kernel - 1)
    op = ops.CausalConv1d(sympy.Integer(channels), sympy.Integer(kernel))
    assert sum(int(sympy.Mul(*p.shape)) for p in op.params(((2, T, channels),))) == \
        sum(p.numel() for p in conv.parameters())
    x = torch.randn(2, channels, T)
    flops, out = _count(op, (sympy.Integer(2), sympy.Integer(T), sympy.Integer(channels)))
    assert flops == _flops(lambda: conv(x)[..., :T])
    assert tuple(out) == (2, T, channels)


def test_selective_scan_flops_equal_the_sequential_loop():
    from transformers.models.mamba.modeling_mamba import mamba_selective_scan

    Bn, T, D, N = 2, 6, 5, 3
    x, dt = torch.randn(Bn, D, T), torch.randn(Bn, D, T)
    A, Bm, Cm = -torch.rand(D, N), torch.randn(Bn, N, T), torch.randn(Bn, N, T)
    z, Dp = torch.randn(Bn, D, T), torch.randn(D)
    measured = _flops(lambda: mamba_selective_scan(x, dt, A, Bm, Cm, D=Dp, z=z, delta_softplus=True,
                                                   use_associative_scan=False))
    op = ops.SelectiveScan(sympy.Integer(D), sympy.Integer(N))
    s = (Bn, T, D)
    flops, _ = _count(op, s, s, (Bn, T, N), (Bn, T, N))
    assert flops == measured == 2 * Bn * T * D * N
    assert [(p.name, tuple(p.shape)) for p in op.params((s, s, (Bn, T, N), (Bn, T, N)))] == \
        [("A_log", (D, N)), ("D", (D,))]


@pytest.mark.parametrize("T,chunk", [(10, 4), (8, 4), (3, 8), (1, 4)])
def test_ssd_scan_flops_equal_the_chunked_scan(T, chunk):
    from transformers.models.mamba2.modeling_mamba2 import mamba2_chunk_scan

    Bn, H, P, N, G = 2, 4, 3, 5, 2
    x, dt = torch.randn(Bn, T, H, P), torch.randn(Bn, T, H)
    Bm, Cm = torch.randn(Bn, T, G, N), torch.randn(Bn, T, G, N)
    A, Dp, bias = -torch.rand(H), torch.randn(H), torch.randn(H)
    measured = _flops(lambda: mamba2_chunk_scan(x, dt, A, Bm, Cm, chunk_size=chunk, D=Dp, dt_bias=bias,
                                                dt_softplus=True))
    op = ops.SSDScan(*(sympy.Integer(v) for v in (H, P, N, G, chunk)))
    flops, _ = _count(op, (Bn, T, H * P), (Bn, T, H), (Bn, T, G * N), (Bn, T, G * N))
    assert flops == measured
    # the same count kept symbolic in T, evaluated afterwards
    Ts = sympy.Symbol("T", integer=True, positive=True)
    sym = 2 * sum(w.count for w in op.forward(((Bn, Ts, H * P),) * 1 + ((Bn, Ts, H),) + ((Bn, Ts, G * N),) * 2,
                                                (Bn, Ts, H * P)) if w.kind == "matmul")
    assert int(sym.subs(Ts, T)) == measured


# --- whole models ----------------------------------------------------------------------------

MAMBA = dict(hidden_size=32, num_hidden_layers=2, state_size=4, vocab_size=64, conv_kernel=3, expand=2,
             time_step_rank=5)
MAMBA2 = dict(hidden_size=32, num_hidden_layers=2, state_size=4, vocab_size=64, conv_kernel=3, expand=2,
              num_heads=8, head_dim=8, n_groups=2, chunk_size=4)

CASES = {
    "mamba": ("mamba", "MambaForCausalLM", MAMBA),
    "mamba-bias-untied": ("mamba", "MambaForCausalLM", dict(MAMBA, use_bias=True, use_conv_bias=False,
                                                            tie_word_embeddings=False, time_step_rank="auto")),
    "falcon_mamba": ("falcon_mamba", "FalconMambaForCausalLM", MAMBA),
    "mamba2": ("mamba2", "Mamba2ForCausalLM", MAMBA2),
    "mamba2-bias-tied": ("mamba2", "Mamba2ForCausalLM", dict(MAMBA2, use_bias=True, tie_word_embeddings=True,
                                                             n_groups=4)),
}


def _model(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    torch.manual_seed(0)
    model = getattr(transformers, cls)(config).eval()
    return config, model


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [5, 10])
def test_model_params_and_forward_flops(case, T, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, model = _model(model_type, cls, overrides)
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    Bn = 2
    ids = torch.randint(0, 64, (Bn, T))
    measured = _flops(lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False))
    m = symgpt.load(str(path), B=Bn, T=T)
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    assert int(m.quantity("flops.forward").value) == measured


@pytest.mark.parametrize("case", ["mamba", "mamba2"])
def test_inference_answers_name_the_recurrent_state(case, tmp_path):
    """The inference answers are given (their values: tests/test_recurrent_inference.py), each
    saying that the recurrent layers keep a state, not a KV cache."""
    model_type, cls, overrides = CASES[case]
    config, _ = _model(model_type, cls, overrides)
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    m = symgpt.load(str(path))
    for name in ("inference.kv_cache", "inference.state", "inference.decode.flops", "inference.prefill.flops"):
        assert any("recurrent layers keep a state of fixed size" in n for n in m.quantity(name).notes), name
    assert "attention layers only" in m.quantity("memory.kv_cache").notes[0]


def test_reader_refuses_what_it_does_not_model(tmp_path):
    config, _ = _model("mamba2", "Mamba2ForCausalLM", MAMBA2)
    cfg = json.loads(config.to_json_string(use_diff=False))
    cfg["hidden_act"] = "gelu"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(SymgptError, match="hidden_act"):
        symgpt.load(str(path))


@pytest.mark.parametrize("case,words", [("mamba", "sequential scan"), ("mamba2", "chunked algorithm")])
def test_the_scan_convention_is_stated_on_the_answer(case, words, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, _ = _model(model_type, cls, overrides)
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    notes = symgpt.load(str(path)).quantity("flops.forward").notes
    assert any(words in n for n in notes) and any("causal conv1d" in n for n in notes)
