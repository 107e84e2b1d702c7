"""The speech-encoder ops, rule by rule, against PyTorch: Conv1d's shape, parameters and FLOPs
under FlopCounterMode (forward, and backward with and without an input gradient) and the tensor
it saves; the channels-last view; the frozen position rows; the frame pooling."""

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

from symgpt import ops
from symgpt.core.symbols import B, N_mel, T_enc, d
from symgpt.ops.base import Context, numel

I = sympy.Integer


def _flops(works):
    return sum(2 * w.count for w in works if w.kind == "matmul")


@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("needs_input_grad", [False, True])
def test_conv1d_as_flop_counter_counts_it(stride, needs_input_grad):
    op = ops.Conv1d(I(6), I(8), I(3), I(stride))
    x = (I(2), I(6), I(20))
    out = op.shape((x,))
    conv = torch.nn.Conv1d(6, 8, kernel_size=3, stride=stride, padding=1)
    mel = torch.rand(2, 6, 20, requires_grad=needs_input_grad)
    with FlopCounterMode(display=False) as fwd:
        y = conv(mel)
    assert tuple(y.shape) == out
    assert [p.shape for p in op.params((x,))] == [tuple(conv.weight.shape), tuple(conv.bias.shape)]
    assert _flops(op.forward((x,), out)) == fwd.get_total_flops()
    with FlopCounterMode(display=False) as bwd:
        y.sum().backward()
    ctx = Context(needs_grad=(needs_input_grad,), trainable=True)
    assert _flops(op.backward((x,), out, ctx)) == bwd.get_total_flops()
    assert [s.shape for s in op.saved((x,), out, ctx)] == [x]  # the input, for the weight gradient


def test_whisper_front_end_symbolic():
    c1, c2 = ops.Conv1d(N_mel, d, I(3)), ops.Conv1d(d, d, I(3), I(2))
    a = c1.shape(((B, N_mel, 2 * T_enc),))
    b = c2.shape((a,))
    assert b == (B, d, T_enc)
    assert ops.ChannelsLast().shape((b,)) == (B, T_enc, d)
    assert sympy.expand(_flops(c1.forward(((B, N_mel, 2 * T_enc),), a)) - 12 * B * N_mel * d * T_enc) == 0
    pos = ops.AddPositionRows(I(1500), d)
    assert pos.shape(((B, T_enc, d),)) == (B, T_enc, d) and [p.shape for p in pos.params(((B, T_enc, d),))] == [(1500, d)]
    assert pos.backward(((B, T_enc, d),), (B, T_enc, d), Context(trainable=True)) == ()  # frozen: no gradient


def test_frame_pooling_counts_no_matmul():
    pool = ops.AvgPoolFrames(I(2))
    x = (I(2), I(8), I(16))
    out = pool.shape((x,))
    t = torch.rand(2, 8, 16)
    with FlopCounterMode(display=False) as fc:
        y = torch.nn.AvgPool1d(2, 2)(t.permute(0, 2, 1)).permute(0, 2, 1)
    assert tuple(y.shape) == out and fc.get_total_flops() == _flops(pool.forward((x,), out)) == 0
    assert pool.forward((x,), out)[0].count == numel(x)


def test_stack_frames_is_a_reshape_view():
    # Voxtral: last_hidden_state.reshape(-1, intermediate_size), k = intermediate_size / d positions a row
    op = ops.StackFrames(I(4))
    x = (I(2), I(12), I(5))
    h = torch.rand(2, 12, 5)
    with FlopCounterMode(display=False) as fc:
        y = h.reshape(2, -1, 20)
    assert tuple(y.shape) == op.shape((x,)) == (2, 3, 20)
    assert y.data_ptr() == h.data_ptr()  # a view of the contiguous tensor
    assert fc.get_total_flops() == 0 and op.forward((x,), op.shape((x,))) == ()
    assert op.params((x,)) == () and op.saved((x,), op.shape((x,)), Context(needs_grad=(True,), trainable=True)) == ()
