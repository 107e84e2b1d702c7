"""examples/my_arch.py (the README's "declaring your own architecture") against a PyTorch model
of the same architecture written here: parameter count and FLOPs (forward, forward+backward)."""

import importlib.util
import math
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

import symgpt
from symgpt.families import families, family
from symgpt.core.symbols import d_ff, h_kv
from oracles.measure import flop_count, param_count

EXAMPLE = Path(__file__).parent.parent / "examples" / "my_arch.py"
SIZES = dict(L=3, d=64, h=8, h_kv=2, d_ff=160, V=300, T_max=32)


def _example():
    spec = importlib.util.spec_from_file_location("symgpt_example_my_arch", EXAMPLE)
    if "my_arch" not in families():
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    return family("my_arch")


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class Block(nn.Module):
    def __init__(self, d, h, h_kv, d_ff):
        super().__init__()
        self.h, self.h_kv, self.dh = h, h_kv, d // h
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, h_kv * self.dh, bias=False)
        self.v = nn.Linear(d, h_kv * self.dh, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d, bias=False)

    def forward(self, x):
        Bn, Tn, _ = x.shape
        a = self.n1(x)
        q = self.q(a).view(Bn, Tn, self.h, self.dh).transpose(1, 2)          # (B, h, T, dh)
        k = self.k(a).view(Bn, Tn, self.h_kv, self.dh).transpose(1, 2)       # (B, h_kv, T, dh)
        v = self.v(a).view(Bn, Tn, self.h_kv, self.dh).transpose(1, 2)
        k = k.repeat_interleave(self.h // self.h_kv, dim=1)                  # (B, h, T, dh)
        v = v.repeat_interleave(self.h // self.h_kv, dim=1)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.dh)                     # (B, h, T, T)
        mask = torch.ones(Tn, Tn, dtype=torch.bool, device=x.device).triu(1)
        p = s.masked_fill(mask, float("-inf")).softmax(-1)
        z = (p @ v).transpose(1, 2).reshape(Bn, Tn, -1)                      # (B, T, d)
        x = x + self.o(z)
        u = self.up(self.n2(x))
        return x + self.down(F.relu(u) ** 2)


class MyArch(nn.Module):
    def __init__(self, L, d, h, h_kv, d_ff, V, T_max):
        super().__init__()
        # nanoGPT's layout (oracles.measure reads the vocabulary from transformer.wte)
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, d), wpe=nn.Embedding(T_max, d)))
        self.blocks = nn.ModuleList(Block(d, h, h_kv, d_ff) for _ in range(L))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, V, bias=False)

    def forward(self, idx, targets=None):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.norm(x))
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def test_example_family_counts_match_a_pytorch_model():
    _example()
    m = symgpt.load("my_arch", **SIZES)
    torch.manual_seed(0)
    net = MyArch(**SIZES)
    assert m.params == param_count(net)
    B, T = 2, 16
    mb = m.with_(B=B, T=T)
    assert mb.quantity("flops.forward") == flop_count(net, B, T)
    assert mb.quantity("flops.train") == flop_count(net, B, T, backward=True)


def test_example_family_gets_every_printer():
    from symgpt.documents.diagrams import dot_text

    _example()
    m = symgpt.load("my_arch", **SIZES)
    assert "blocks/ffn/square" in m.graph
    assert "digraph" in dot_text(m)
    assert [t.shape for t in m.shapes(B=2, T=16)][-2] == (2, 16, 300)
    sym = symgpt.load("my_arch")
    assert sym.params.expr.free_symbols >= {h_kv, d_ff}
