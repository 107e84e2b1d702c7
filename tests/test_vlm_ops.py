"""The ops vision--language models add, rule by rule, against PyTorch: Gemma 3's average pool of
the patch grid (``nn.AvgPool2d`` between a reshape to the grid and a flatten back) and the
placement of image features among the token embeddings (``masked_scatter``)."""

import pytest
import sympy
import torch

from oracles.measure import saved_storages
from torch.utils.flop_counter import FlopCounterMode

from symgpt import ops
from symgpt.ops.base import Context, numel

I = sympy.Integer


def test_avg_pool_patches_as_gemma3_pools_them():
    b, n, k, dim = 2, 8, 4, 6
    op = ops.AvgPoolPatches(I(k))
    out = op.shape(((I(b), I(n * n), I(dim)),))
    x = torch.randn(b, n * n, dim, requires_grad=True)
    pool = torch.nn.AvgPool2d(kernel_size=k, stride=k)
    with FlopCounterMode(display=False) as fcm:
        y = pool(x.transpose(1, 2).reshape(b, dim, n, n)).flatten(2).transpose(1, 2)
    assert tuple(y.shape) == tuple(int(s) for s in out)
    assert op.params(((I(b), I(n * n), I(dim)),)) == ()
    # no multiply-adds: FlopCounterMode counts none, symgpt's forward is elementwise work only
    assert fcm.get_total_flops() == 0
    assert all(w.kind != "matmul" for w in op.forward(((I(b), I(n * n), I(dim)),), out))
    assert [w.count for w in op.forward(((I(b), I(n * n), I(dim)),), out)] == [b * n * n * dim]
    # saved: the grid the pool reads, a copy of the input in (B, dim, n, n) layout
    kept = saved_storages(lambda x: pool(x.transpose(1, 2).reshape(b, dim, n, n)).flatten(2).transpose(1, 2), x)
    rule = op.saved(((I(b), I(n * n), I(dim)),), out, Context(needs_grad=(True,)))
    assert sum(kept.values()) == sum(4 * numel(s.shape) for s in rule)  # fp32
    assert op.saved(((I(b), I(n * n), I(dim)),), out, Context(needs_grad=(False,))) == ()


def test_merge_image_tokens_is_a_copy():
    b, t_len, dim, imgs, t = 1, 10, 8, 2, 3
    op = ops.MergeImageTokens()
    shapes = ((I(b), I(t_len), I(dim)), (I(b * imgs), I(t), I(dim)))
    out = op.shape(shapes)
    x, feats = torch.randn(b, t_len, dim), torch.randn(b * imgs, t, dim)
    mask = torch.zeros(b, t_len, 1, dtype=torch.bool)
    mask[:, 2:2 + imgs * t] = True
    with FlopCounterMode(display=False) as fcm:
        y = x.masked_scatter(mask.expand_as(x), feats)
    assert tuple(y.shape) == tuple(int(s) for s in out)
    assert fcm.get_total_flops() == 0 and op.forward(shapes, out) == () and op.params(shapes) == ()
    with pytest.raises(Exception, match="do not match"):
        op.shape(((I(b), I(t_len), I(dim)), (I(b * imgs), I(t), I(dim + 1))))
