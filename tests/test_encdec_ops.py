"""The ops encoders, encoder--decoders and ViT add, rule by rule (shape, params, forward,
backward, saved), against PyTorch where PyTorch has the op: a Conv2d's FLOPs under
``FlopCounterMode`` (forward, and backward with and without an input gradient), the tensors
``saved_tensors_hooks`` sees for tanh, the composite tanh-GELU, cross-attention's matmuls."""

import math

import pytest
import sympy
import torch

from oracles.measure import saved_storages
from torch.utils.flop_counter import FlopCounterMode

from symgpt import ops
from symgpt.ops.base import Context, numel
from symgpt.core.symbols import B, C_img, P_patch, S_img, T, T_dec, T_enc, d, h

I = sympy.Integer


def _flops(works):
    return sum(2 * w.count for w in works if w.kind == "matmul")


@pytest.mark.parametrize("needs_input_grad", [False, True])
def test_conv2d_patches_as_flop_counter_counts_them(needs_input_grad):
    op = ops.Conv2d(I(3), I(8), I(4))
    x = (I(2), I(3), I(16), I(16))
    out = op.shape((x,))
    assert out == (2, 8, 4, 4)
    assert [p.shape for p in op.params((x,))] == [(8, 3, 4, 4), (8,)]
    conv = torch.nn.Conv2d(3, 8, kernel_size=4, stride=4)
    px = torch.rand(2, 3, 16, 16, requires_grad=needs_input_grad)
    with FlopCounterMode(display=False) as fwd:
        y = conv(px)
    assert _flops(op.forward((x,), out)) == fwd.get_total_flops()
    with FlopCounterMode(display=False) as bwd:
        y.sum().backward()
    ctx = Context(needs_grad=(needs_input_grad,), trainable=True)
    assert _flops(op.backward((x,), out, ctx)) == bwd.get_total_flops()
    assert [s.shape for s in op.saved((x,), out, ctx)] == [x]  # the pixels, for the weight gradient


def test_conv2d_symbolic_and_flatten():
    op = ops.Conv2d(C_img, d, P_patch)
    out = op.shape(((B, C_img, S_img, S_img),))
    assert out == (B, d, S_img / P_patch, S_img / P_patch)
    assert sympy.expand(op.forward(((B, C_img, S_img, S_img),), out)[0].count - B * (S_img / P_patch) ** 2 * d * C_img * P_patch**2) == 0
    flat = ops.FlattenPatches()
    assert flat.shape((out,)) == (B, (S_img / P_patch) ** 2, d)
    assert flat.forward((out,), None) == () and flat.params((out,)) == () and flat.saved((out,), None, Context()) == ()
    assert flat.backward((out,), None, Context()) == ()


def test_class_token_and_positions():
    cls = ops.ClassToken(d)
    x = (B, T, d)
    assert cls.shape((x,)) == (B, T + 1, d)
    assert [p.shape for p in cls.params((x,))] == [(1, 1, d)]
    assert cls.forward((x,), None) == () and cls.saved((x,), None, Context()) == ()
    (w,) = cls.backward((x,), (B, T + 1, d), Context(trainable=True))
    assert w.count == B * d  # the batch's gradients of the one token, summed
    pos = ops.AddPositions(T + 1, d)
    y = (B, T + 1, d)
    assert pos.shape((y,)) == y and [p.shape for p in pos.params((y,))] == [(1, T + 1, d)]
    assert pos.forward((y,), y)[0].count == numel(y) and pos.saved((y,), y, Context()) == ()
    assert pos.backward((y,), y, Context(trainable=True))[0].grad == "weight"
    with pytest.raises(Exception, match="does not fit"):
        pos.shape(((B, T, d),))


def test_relative_position_bias():
    bias = ops.RelativePositionBias(I(32), h, bidirectional=True)
    assert bias.shape(((B, T_dec), (B, T_enc))) == (1, h, T_dec, T_enc)
    assert bias.shape(((B, T),)) == (1, h, T, T)
    assert [p.shape for p in bias.params(((B, T),))] == [(32, h)]
    out = (1, h, T, T)
    assert bias.forward(((B, T),), out) == () and bias.backward(((B, T),), out, Context()) == ()
    (saved,) = bias.saved(((B, T),), out, Context(trainable=True))
    assert saved.shape == (T, T) and saved.dtype == "int64"  # the bucket of each (query, key)


def test_sinusoidal_positions_own_nothing():
    op = ops.SinusoidalPositions(d)
    assert op.shape(((B, T),)) == (T, d) and op.params(((B, T),)) == ()
    assert op.forward(((B, T),), (T, d))[0].count == T * d
    assert op.backward(((B, T),), (T, d), Context()) == () and op.saved(((B, T),), (T, d), Context()) == ()




def test_tanh_and_composite_gelu_save_what_pytorch_saves():
    x = torch.rand(3, 5, requires_grad=True)
    shape = (I(3), I(5))
    saved = saved_storages(torch.tanh, x)
    assert len(saved) == len(ops.Tanh().saved((shape,), shape, Context())) == 1

    def gelu_new(t):  # transformers' NewGELUActivation
        return 0.5 * t * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (t + 0.044715 * torch.pow(t, 3.0))))

    y = x * 1  # a non-leaf input, as inside a model
    composite = ops.GELU(approximate="tanh", composite=True).saved((shape,), shape, Context(implementation="hf-eager"))  # eager PyTorch, as measured
    assert len(saved_storages(gelu_new, y)) == len(composite) == 4
    assert len(ops.GELU(approximate="tanh").saved((shape,), shape, Context())) == 1


def test_first_token_is_a_view():
    op = ops.FirstToken()
    assert op.shape(((B, T, d),)) == (B, d) and op.view_of_input
    assert op.forward(((B, T, d),), (B, d)) == () and op.params(((B, T, d),)) == ()


def test_cross_attention_matmuls_two_lengths():
    """Q (B, h, T_dec, dh) against K, V (B, h, T_enc, dh): the scores are T_dec x T_enc."""
    scores = ops.Matmul("attention_scores", transpose_b=True)
    q, k = (I(2), I(4), I(5), I(8)), (I(2), I(4), I(7), I(8))
    s = scores.shape((q, k))
    assert s == (2, 4, 5, 7)
    values = ops.Matmul("attention_values")
    z = values.shape((s, k))
    assert z == q
    tq, tk = torch.rand(2, 4, 5, 8), torch.rand(2, 4, 7, 8)
    with FlopCounterMode(display=False) as f:
        torch.matmul(torch.matmul(tq, tk.transpose(-1, -2)).softmax(-1), tk)
    assert _flops(scores.forward((q, k), s)) + _flops(values.forward((s, k), z)) == f.get_total_flops()
