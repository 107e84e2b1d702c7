"""Voxtral Realtime (VoxtralRealtimeForConditionalGeneration) against transformers: parameters on the
meta device for the configuration class's defaults and for small configurations of other sizes (tied and
untied); the text decoder's forward FLOPs (each layer's 1 + MLP(t_cond) scale included) under
FlopCounterMode on a tiny CPU model; audio input (the held tower) refused in one line."""

import json
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from oracles.hf_encdec import build
from symgpt.core.errors import SymgptError
from symgpt.model.model import from_config

CLS = "VoxtralRealtimeForConditionalGeneration"
SMALL = {"model_type": "voxtral_realtime", "downsample_factor": 2,
         "audio_config": {"model_type": "voxtral_realtime_encoder", "hidden_size": 24, "num_hidden_layers": 2,
                          "num_attention_heads": 3, "head_dim": 10, "intermediate_size": 40, "num_mel_bins": 12},
         "text_config": {"model_type": "voxtral_realtime_text", "vocab_size": 64, "hidden_size": 40,
                         "intermediate_size": 56, "num_hidden_layers": 2, "num_attention_heads": 4,
                         "num_key_value_heads": 2, "head_dim": 12, "sliding_window": 64}}
UNTIED = {**SMALL, "tie_word_embeddings": False,
          "text_config": {**SMALL["text_config"], "tie_word_embeddings": False}}

#: VoxtralRealtimeConfig's defaults, as config.to_json_string(use_diff=False) writes them
DEFAULTS = json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / "voxtral_realtime.json").read_text())


def _params(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("cfg", [DEFAULTS, SMALL, UNTIED], ids=["defaults", "small", "untied"])
def test_params_exact_on_meta(cfg):
    hf = build(cfg, CLS)
    m = from_config({**cfg, "architectures": [CLS]}, "v")
    assert m.family.name == "voxtral_realtime"
    assert m.params.value == _params(hf)
    assert not [n for n in m.notes if "not understood" in n], m.notes


def test_decoder_forward_flops_with_the_time_modulation():
    # transformers' forward always reads audio features: the oracle is its text path, the language model
    # over token embeddings with t_cond as VoxtralRealtimeModel.forward makes it, and lm_head
    hf = build(SMALL, CLS, device="cpu").eval()
    m = from_config({**SMALL, "architectures": [CLS]}, "v")
    T = 7
    ids = torch.randint(0, 64, (2, T))
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        emb = hf.model.get_input_embeddings()(ids)
        t_cond = hf.model.time_embedding(torch.full((1,), 6.0))[None, ...]
        h = hf.model.language_model(inputs_embeds=emb, t_cond=t_cond, use_cache=False).last_hidden_state
        hf.lm_head(h)
    assert m.with_(B=2, T=T).quantity("flops.forward").value == fc.get_total_flops()
    # without the modulation the count is smaller by its two one-row matmuls a layer (2·d·32 multiply-adds)
    bare = m.with_(time_modulation=None, B=2, T=T)
    assert fc.get_total_flops() - bare.quantity("flops.forward").value == 2 * 2 * (2 * 40 * 32)
    assert m.params.value - bare.params.value == 2 * (2 * 40 * 32)


def test_audio_input_refused_in_one_line():
    m = from_config({**SMALL, "architectures": [CLS]}, "v")
    with pytest.raises(SymgptError, match="audio input is not modelled") as e:
        m.with_(B=1, T=8, N_aud=1).quantity("params").value
    assert "\n" not in str(e.value)
