"""Moonshine (MoonshineForConditionalGeneration, MoonshineModel) against transformers: parameters
on the meta device for the configuration class's defaults; on tiny CPU models the parameters and
the forward FLOPs under FlopCounterMode over raw samples (the unpadded convolutions' closed form of
T_enc, the encoder, one decoder pass); the stem's ops against PyTorch's."""

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.families.blocks.moonshine import SAMPLES
from symgpt.core.symbols import T_enc
from symgpt.model.model import from_config
from symgpt.ops.audio import Conv1dValid, GroupNorm1

TINY = {"model_type": "moonshine", "vocab_size": 40, "hidden_size": 16, "intermediate_size": 24,
        "encoder_num_hidden_layers": 2, "decoder_num_hidden_layers": 3, "encoder_num_attention_heads": 2,
        "decoder_num_attention_heads": 2, "encoder_num_key_value_heads": 2, "decoder_num_key_value_heads": 2,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
        "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 1}


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cls", ["MoonshineForConditionalGeneration", "MoonshineModel"])
def test_default_config_params_exact_on_meta(cls):
    hf = build({"model_type": "moonshine"}, cls)
    m = from_config({"model_type": "moonshine", "architectures": [cls]}, "m")
    assert m.family.name == "moonshine" and m.params.value == _params(hf)
    assert m.flags["rotary_dims"] == 32  # int(36 · 0.9): 32 of 36 dimensions
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("cls", ["MoonshineForConditionalGeneration", "MoonshineModel"])
def test_tiny_model_params_and_forward_flops(cls):
    hf = build(TINY, cls, device="cpu").eval()
    m = from_config({**TINY, "architectures": [cls]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, T, T_dec = 2, 5, 4
    samples = int(SAMPLES.subs(T_enc, T))  # the shortest input of T encoder positions
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        out = hf(input_values=torch.rand(Bn, samples), decoder_input_ids=torch.randint(0, 40, (Bn, T_dec)),
                 use_cache=False)
    assert out.encoder_last_hidden_state.shape[1] == T
    assert m.with_(B=Bn, T_enc=T, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_stem_ops_against_pytorch():
    I = sympy.Integer
    conv = torch.nn.Conv1d(3, 4, kernel_size=7, stride=3)
    x = torch.rand(2, 3, 25)
    op = Conv1dValid(I(3), I(4), I(7), I(3))
    with FlopCounterMode(display=False) as fc:
        y = conv(x)
    shape = op.shape(((I(2), I(3), I(25)),))
    assert tuple(y.shape) == shape
    assert sum(2 * w.count for w in op.forward(((I(2), I(3), I(25)),), shape) if w.kind == "matmul") == \
        fc.get_total_flops()
    gn = torch.nn.GroupNorm(1, 4)
    assert [p.shape for p in GroupNorm1(I(4)).params(((I(2), I(4), I(6)),))] == [gn.weight.shape, gn.bias.shape]


def test_encoder_positions_closed_form():
    # T_enc of S samples: three unpadded convolutions (kernel, stride) = (127, 64), (7, 3), (3, 2);
    # 384·T_enc + 511 is the shortest input of T_enc positions, 383 more samples still give T_enc
    hf = build(TINY, "MoonshineModel", device="cpu").eval()
    for T in (1, 4, 9):
        S = int(SAMPLES.subs(T_enc, T))
        for n, want in ((S - 1, T - 1), (S, T), (S + 383, T), (S + 384, T + 1)):
            assert int(hf._get_feat_extract_output_lengths(torch.tensor(n))) == want
