"""Presets of the encoder, encoder--decoder and vision families: each equals its checkpoint's
config.json as symgpt reads it (except the heads a note names), and the original Transformer's
rows are checked by hand arithmetic against the paper's rounded counts."""

from pathlib import Path

import pytest
import sympy

import symgpt
from symgpt.families import presets

PRESETS = presets()

CONFIGS = Path(__file__).parent / "configs" / "encdec"

#: preset -> (config file, flags the preset sets beyond the config)
FROM_CONFIG = {
    "bert-base": ("bert-base-uncased.json", {}),
    "roberta-base": ("roberta-base.json", {}),
    "distilbert-base": ("distilbert-base-uncased.json", {}),
    "t5-small": ("t5-small.json", {}),
    "t5-base": ("t5-base.json", {}),
    "bart-base": ("bart-base.json", {"head": "lm"}),  # the config names BartModel: see its note
    "vit-base": ("vit-base-patch16-224.json", {}),
}


@pytest.mark.parametrize("name", sorted(FROM_CONFIG))
def test_preset_equals_its_config(name):
    path, flags = FROM_CONFIG[name]
    p = symgpt.load(name)
    c = symgpt.load(CONFIGS / path, **flags)
    assert p.sizes == c.sizes and p.flags == c.flags and p.family is c.family
    assert p.params == c.params.value


def _transformer_by_hand(d, d_ff, V, layers=6):
    """Vaswani et al. 2017 with biases everywhere: per encoder layer 4 projections (d² + d), two
    FFN matrices with biases, two LayerNorms (2d each); a decoder layer adds cross-attention
    (4 (d² + d)) and a third LayerNorm; one V x d table shared by both embeddings and the head."""
    attn = 4 * (d * d + d)
    ffn = 2 * d * d_ff + d_ff + d
    enc = attn + ffn + 2 * 2 * d
    dec = 2 * attn + ffn + 3 * 2 * d
    return layers * (enc + dec) + V * d


@pytest.mark.parametrize("name,d,d_ff,paper", [("transformer-base", 512, 2048, 65_000_000),
                                               ("transformer-big", 1024, 4096, 213_000_000)])
def test_original_transformer_beside_the_paper(name, d, d_ff, paper):
    m = symgpt.load(name)
    exact = _transformer_by_hand(d, d_ff, 37_000)
    assert m.params == exact
    note = PRESETS[name].note
    assert f"{exact:,}" in note and f"{paper // 1_000_000}M" in note and "37,000" in note
    # the paper rounds to the nearest million; the shared-vocabulary assumption lands within 3%
    assert abs(exact - paper) / paper < sympy.Rational(3, 100)


def test_transformer_has_no_position_parameters():
    base = symgpt.load("transformer-base")
    assert [p for p, _ in base.params.breakdown if "embed_positions" in p] == []
    assert "sinusoidal" in base.flags["positions"]


@pytest.mark.parametrize("L,L_dec", [(2, 3), (1, 1)])
def test_original_transformer_against_pytorch(L, L_dec):
    """PyTorch's ``torch.nn.Transformer`` is the paper's encoder-decoder without embeddings and
    head, plus a final LayerNorm after each stack (2·2d parameters the paper's post-norm model
    does not have). Parameters, and FlopCounterMode's forward and forward + backward (inputs
    needing gradients, as embeddings' outputs do), equal symgpt's less the tied V x d table and the
    LM head's matmul (2·B·T_dec·V·d forward, 3x that with its backward)."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    d, h, ff, V, B, S, T = 64, 4, 96, 100, 2, 7, 5
    torch.manual_seed(0)
    tr = torch.nn.Transformer(d_model=d, nhead=h, num_encoder_layers=L, num_decoder_layers=L_dec,
                              dim_feedforward=ff, batch_first=True, dropout=0.0)
    m = symgpt.load("transformer", L=L, L_dec=L_dec, d=d, h=h, d_ff=ff, V=V, B=B, T_enc=S, T_dec=T)
    assert m.params.value - V * d == sum(p.numel() for p in tr.parameters()) - 2 * 2 * d
    src = torch.rand(B, S, d, requires_grad=True)
    tgt = torch.rand(B, T, d, requires_grad=True)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(T)
    head = 2 * B * T * V * d
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as fwd:
        out = tr(src, tgt, tgt_mask=mask)
    assert m.quantity("flops.forward").value - head == fwd.get_total_flops()
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as both:
        tr(src, tgt, tgt_mask=mask).sum().backward()
    assert m.quantity("flops.train").value - 3 * head == both.get_total_flops()
    del out
