"""Speech2Text (Speech2TextForConditionalGeneration, Speech2TextModel) against transformers:
parameters on the meta device for the configuration class's defaults; on tiny CPU models the
parameters and the forward FLOPs under FlopCounterMode (the subsampler's convolutions over the
filterbank frames, the encoder over frames/4 positions and one decoder pass); the GLU op against
``nn.functional.glu``."""

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.model.model import from_config
from symgpt.ops.audio import GLU
from symgpt.ops.base import Context

TINY = {"model_type": "speech_to_text", "vocab_size": 60, "d_model": 16, "encoder_layers": 2, "decoder_layers": 3,
        "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 24, "decoder_ffn_dim": 24,
        "conv_channels": 12, "conv_kernel_sizes": [5, 5], "input_feat_per_channel": 10, "input_channels": 1,
        "max_source_positions": 64, "max_target_positions": 32}


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cls", ["Speech2TextForConditionalGeneration", "Speech2TextModel"])
def test_default_config_params_exact_on_meta(cls):
    hf = build({"model_type": "speech_to_text"}, cls)
    m = from_config({"model_type": "speech_to_text", "architectures": [cls]}, "s2t")
    assert m.family.name == "speech_to_text" and m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


@pytest.mark.parametrize("cls", ["Speech2TextForConditionalGeneration", "Speech2TextModel"])
def test_tiny_model_params_and_forward_flops(cls):
    hf = build(TINY, cls, device="cpu").eval()
    m = from_config({**TINY, "architectures": [cls]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, frames, T_dec = 2, 24, 5
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        out = hf(input_features=torch.rand(Bn, frames, 10), decoder_input_ids=torch.randint(0, 60, (Bn, T_dec)),
                 use_cache=False)
    assert out.encoder_last_hidden_state.shape[1] == frames // 4
    assert m.with_(B=Bn, T_enc=frames // 4, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_glu_shape_work_and_saved_input():
    I = sympy.Integer
    x = (I(2), I(8), I(5))
    t = torch.rand(2, 8, 5, requires_grad=True)
    with FlopCounterMode(display=False) as fc:
        y = torch.nn.functional.glu(t, dim=1)
    assert tuple(y.shape) == GLU().shape((x,)) and fc.get_total_flops() == 0
    assert not [w for w in GLU().forward((x,), GLU().shape((x,))) if w.kind == "matmul"]
    ctx = Context(needs_grad=(True,), trainable=True)
    assert [s.shape for s in GLU().saved((x,), GLU().shape((x,)), ctx)] == [x]
    assert y.grad_fn.name() == "GluBackward0" and y.grad_fn._saved_self.shape == t.shape
