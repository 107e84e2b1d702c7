"""Pop2Piano (Pop2PianoForConditionalGeneration) against transformers: parameters on the meta
device for the configuration class's defaults; on a tiny CPU model the parameters and the forward
FLOPs under FlopCounterMode of what ``generate`` runs: the composer row prepended to the features
(``get_mel_conditioner_outputs``), the encoder over them and one decoder pass."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import GenerationConfig

from oracles.hf_encdec import build
from symgpt.model.model import from_config
from symgpt.ops.audio import PrependRows

CLS = "Pop2PianoForConditionalGeneration"
TINY = {"model_type": "pop2piano", "vocab_size": 50, "composer_vocab_size": 3, "d_model": 16, "d_kv": 4,
        "d_ff": 24, "num_layers": 2, "num_decoder_layers": 3, "num_heads": 2, "dropout_rate": 0.0}


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("tie", [True, False])
def test_default_config_params_exact_on_meta(tie):
    # tie_word_embeddings ties the stacks' token tables to shared either way; lm_head is never tied
    hf = build({"model_type": "pop2piano", "tie_word_embeddings": tie}, CLS)
    m = from_config({"model_type": "pop2piano", "tie_word_embeddings": tie, "architectures": [CLS]}, "p")
    assert m.family.name == "pop2piano" and not m.flags["tied"]
    assert m.params.value == _params(hf)


def test_tiny_model_params_and_forward_flops_with_the_composer_row():
    hf = build(TINY, CLS, device="cpu").eval()
    m = from_config({**TINY, "architectures": [CLS]}, "tiny")
    assert m.params.value == _params(hf)
    Bn, frames, T_dec = 2, 7, 5
    gen = GenerationConfig(composer_to_feature_token={"a": 10, "b": 11, "c": 12})
    feats = torch.rand(Bn, frames, 16)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        x, _ = hf.get_mel_conditioner_outputs(feats, "b", gen, torch.ones(Bn, frames))
        hf(inputs_embeds=x, decoder_input_ids=torch.randint(0, 50, (Bn, T_dec)), use_cache=False)
    assert x.shape == (Bn, frames + 1, 16)
    assert m.with_(B=Bn, T_enc=frames + 1, T_dec=T_dec).quantity("flops.forward").value == fc.get_total_flops()


def test_prepend_rows_is_torch_cat():
    import sympy

    I = sympy.Integer
    rows, x = torch.rand(2, 1, 5), torch.rand(2, 7, 5)
    with FlopCounterMode(display=False) as fc:
        y = torch.cat([rows, x], dim=1)
    assert tuple(y.shape) == PrependRows().shape(((I(2), I(1), I(5)), (I(2), I(7), I(5))))
    assert fc.get_total_flops() == 0
