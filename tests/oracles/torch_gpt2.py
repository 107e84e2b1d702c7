"""A small, readable, from-scratch GPT-2 in PyTorch (nanoGPT style).

Independent of symgpt. Shapes use B=batch, T=sequence length, C=n_embd (d),
h=n_head, hd=C//h (head dim), V=padded vocab size, F=d_ff.

Attention modules accept an optional ``recorder`` attribute: a callable
``recorder(name, tensor)`` called with the key intermediates
("q", "k", "v", "scores", "probs", "y"); "scores"/"probs" only
with attention='eager' (SDPA does not expose them), used by ``measure.record_shapes``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab_size: int = 50257
    block_size: int = 1024  # T_max (number of learned positions)
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    d_ff: Optional[int] = None  # None -> 4 * n_embd
    tied: bool = True  # lm_head.weight is wte.weight
    qkv_bias: bool = True  # bias on c_attn (ignored / False when bias=False)
    bias: bool = True  # False removes EVERY Linear and LayerNorm bias
    vocab_multiple: Optional[int] = None  # pad vocab up to a multiple (64 -> 50304)
    dropout: float = 0.0
    attention: str = "eager"  # 'eager' | 'sdpa'

    @property
    def ff(self) -> int:
        return self.d_ff if self.d_ff is not None else 4 * self.n_embd

    @property
    def padded_vocab(self) -> int:
        m = self.vocab_multiple
        if not m:
            return self.vocab_size
        return ((self.vocab_size + m - 1) // m) * m

    @property
    def use_qkv_bias(self) -> bool:
        return self.bias and self.qkv_bias


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        assert cfg.attention in ("eager", "sdpa"), cfg.attention
        self.n_head = cfg.n_head
        self.n_embd = cfg.n_embd
        self.attention = cfg.attention
        self.dropout = cfg.dropout
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.use_qkv_bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.attn_dropout = nn.Dropout(cfg.dropout)
        self.resid_dropout = nn.Dropout(cfg.dropout)
        self.recorder: Optional[Callable[[str, torch.Tensor], None]] = None

    def _rec(self, name: str, t: torch.Tensor) -> None:
        if self.recorder is not None:
            self.recorder(name, t)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape  # (B, T, C)
        hd = C // self.n_head
        qkv = self.c_attn(x)  # (B, T, 3C)
        q, k, v = qkv.split(self.n_embd, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)  # (B, h, T, hd)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)  # (B, h, T, hd)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)  # (B, h, T, hd)
        self._rec("q", q)
        self._rec("k", k)
        self._rec("v", v)
        if self.attention == "eager":
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # (B, h, T, T)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # (T, T)
            att = att.masked_fill(~mask, float("-inf"))  # (B, h, T, T)
            self._rec("scores", att)  # pre-softmax, scaled + masked
            att = F.softmax(att, dim=-1)  # (B, h, T, T)
            self._rec("probs", att)
            att = self.attn_dropout(att)  # (B, h, T, T)
            y = att @ v  # (B, h, T, hd)
        else:
            # SDPA never exposes scores/probs, so nothing is recorded for them.
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)  # (B, h, T, hd)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        self._rec("y", y)
        y = self.resid_dropout(self.c_proj(y))  # (B, T, C)
        return y


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, cfg.ff, bias=cfg.bias)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(cfg.ff, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c_fc(x)  # (B, T, F)
        x = self.gelu(x)  # (B, T, F)
        x = self.c_proj(x)  # (B, T, C)
        return self.dropout(x)  # (B, T, C)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))  # (B, T, C)
        x = x + self.mlp(self.ln_2(x))  # (B, T, C)
        return x


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        V = cfg.padded_vocab
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(V, cfg.n_embd),  # (V, C)
            wpe=nn.Embedding(cfg.block_size, cfg.n_embd),  # (T_max, C)
            drop=nn.Dropout(cfg.dropout),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
            ln_f=nn.LayerNorm(cfg.n_embd, bias=cfg.bias),
        ))
        self.lm_head = nn.Linear(cfg.n_embd, V, bias=False)  # (V, C) weight
        if cfg.tied:
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx: torch.Tensor, targets: Optional[torch.Tensor] = None):
        B, T = idx.shape  # (B, T)
        assert T <= self.config.block_size
        pos = torch.arange(T, dtype=torch.long, device=idx.device)  # (T,)
        tok = self.transformer.wte(idx)  # (B, T, C)
        pe = self.transformer.wpe(pos)  # (T, C)
        x = self.transformer.drop(tok + pe)  # (B, T, C)
        for block in self.transformer.h:
            x = block(x)  # (B, T, C)
        x = self.transformer.ln_f(x)  # (B, T, C)
        logits = self.lm_head(x)  # (B, T, V)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))  # ()
        return logits, loss


def build(cfg: GPTConfig, device="cpu", dtype=torch.float32) -> GPT:
    """Construct GPT(cfg) directly on ``device`` (e.g. 'meta') in ``dtype``."""
    with torch.device(device):
        model = GPT(cfg)
    return model.to(dtype=dtype)
