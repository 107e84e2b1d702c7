"""Fuyu (``symgpt/families/fuyu.py``): parameters against transformers' ``FuyuForCausalLM`` (meta
device, tiny config) and the forward FLOPs one image adds against ``FlopCounterMode`` on the tiny
CPU model fed (1, n, C·P²) image patches (the forward with ``pixel_values`` minus the same forward
without them). The patch-token count is checked by transformers itself: its forward refuses
features whose count differs from the image-token positions."""

from __future__ import annotations

import json

import symgpt

import torch
import transformers

IMAGE_TOKEN, NEWLINE = 290, 291


def test_fuyu_params_and_image_flops(tmp_path):
    cfg = {"model_type": "fuyu", "architectures": ["FuyuForCausalLM"], "image_size": 28, "patch_size": 7,
           "num_channels": 3, "image_token_id": IMAGE_TOKEN,
           "text_config": {"model_type": "persimmon", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
                           "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 256}}
    config = transformers.FuyuConfig(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.FuyuForCausalLM._from_config(config, attn_implementation="eager").eval()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert symgpt.load(str(path)).params == sum(p.numel() for p in model.parameters())

    side = 28 // 7
    row = [IMAGE_TOKEN] * side + [NEWLINE]          # the processor's layout: each row of patches, then a newline
    ids = torch.tensor([[1, 5] + row * side + [7, 9]])
    T = ids.shape[1]

    def flops(**inputs):
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as fcm, torch.no_grad():
            model(use_cache=False, **inputs)
        return fcm.get_total_flops()

    with_image = flops(input_ids=ids, pixel_values=torch.rand(1, side * side, 3 * 7 * 7))
    text_only = flops(input_ids=ids)
    m0 = symgpt.load(str(path), B=1, T=T)
    m1 = symgpt.load(str(path), B=1, T=T, N_img=1)
    assert int(m0.quantity("flops.forward")) == text_only
    assert int(m1.quantity("flops.forward")) - int(m0.quantity("flops.forward")) == with_image - text_only
