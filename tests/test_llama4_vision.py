"""Llama 4 with its vision encoder (``symgpt/families/llama4_vlm.py``, ``blocks/llama4_vision.py``):
parameters against transformers' ``Llama4ForConditionalGeneration`` (meta device for the default
configuration, a tiny CPU model otherwise), and the forward FLOPs one image tile adds against
``FlopCounterMode`` on the tiny model fed a real (1, 3, S, S) pixel tensor (the forward with
``pixel_values`` minus the same forward without them: encoder, adapter and projector). The tokens
per tile are checked by transformers itself: its forward refuses image features whose count
differs from the image-token positions of ``input_ids``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import symgpt
from symgpt.core.errors import SymgptError

import torch
import transformers

IMAGE_TOKEN = 290


def _tiny(side: int = 28, patch: int = 7) -> dict:
    """A tiny Llama 4: side×side tiles in patch×patch patches, shuffled 2×2."""
    return {
        "model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
        "image_token_index": IMAGE_TOKEN, "boi_token_index": 291, "eoi_token_index": 292,
        "tie_word_embeddings": False,
        "text_config": {"model_type": "llama4_text", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 32,
                        "intermediate_size_mlp": 48, "num_hidden_layers": 4, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 2, "num_experts_per_tok": 1,
                        "interleave_moe_layer_step": 2, "max_position_embeddings": 256},
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 32, "intermediate_size": 128,
                          "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": side,
                          "patch_size": patch, "pixel_shuffle_ratio": 0.5, "projector_input_dim": 48,
                          "projector_output_dim": 48, "vision_output_dim": 48},
    }


def _flops(model, **inputs) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        try:
            model(use_cache=False, **inputs)
        except AttributeError as exc:
            # transformers 5.24.0's Llama4ForConditionalGeneration.forward fails only when it
            # assembles its output (outputs.image_outputs of the text model's output), after every
            # computation has run: the count is the whole forward's
            assert "image_outputs" in str(exc), exc
    return fcm.get_total_flops()


def _write(tmp_path, cfg) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize("side,patch,tokens", [(28, 7, 4), (56, 7, 16)])
def test_llama4_params_and_image_flops(tmp_path, side, patch, tokens):
    cfg = _tiny(side, patch)
    config = transformers.Llama4Config(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    model = transformers.Llama4ForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, cfg)
    assert symgpt.load(path).params == sum(p.numel() for p in model.parameters())

    ids = torch.tensor([[2, 6] + [IMAGE_TOKEN] * tokens + [7, 9]])
    T = ids.shape[1]
    with_image = _flops(model, input_ids=ids, pixel_values=torch.rand(1, 3, side, side))
    text_only = _flops(model, input_ids=ids)
    m0 = symgpt.load(path, B=1, T=T)
    m1 = symgpt.load(path, B=1, T=T, N_img=1)
    assert int(m0.quantity("flops.forward")) == text_only
    assert int(m1.quantity("flops.forward")) - int(m0.quantity("flops.forward")) == with_image - text_only
    # the closed form of the tokens per tile: (S_img/P_patch)² / s², s = 1/pixel_shuffle_ratio
    from symgpt.families.blocks.llama4_vision import tokens_per_image

    assert tokens_per_image(m1.arch.flags).subs(m1.bindings) == tokens == (side // patch) ** 2 // 4


def test_llama4_scout_tile_tokens():
    # Llama 4 Scout's vision_config: 336×336 tiles, 14×14 patches, pixel_shuffle_ratio 0.5 -> 144 tokens a tile
    from symgpt.core.symbols import P_patch, S_img
    from symgpt.families.blocks.llama4_vision import tokens_per_image

    assert tokens_per_image({"shuffle": 2}).subs({S_img: 336, P_patch: 14}) == 144


def test_llama4_default_config_holds_what_cannot_chain(tmp_path):
    # transformers' default Llama4VisionConfig: 2²·768 != intermediate_size 5632, vision_output_dim 7680 !=
    # projector_output_dim 4096: every parameter counted (the zoo's oracle), an image refused in one line
    cfg = json.loads((Path(__file__).parent / "configs" / "vlm_zoo" / "llama4.json").read_text())
    config = transformers.Llama4Config(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        model = transformers.Llama4ForConditionalGeneration(config)
    path = _write(tmp_path, cfg)
    assert symgpt.load(path).params == sum(p.numel() for p in model.parameters())
    with pytest.raises(SymgptError, match="cannot read an image"):
        symgpt.load(path, N_img=1).params


@pytest.mark.parametrize("name", ["llama-4-scout", "llama-4-maverick"])
def test_llama4_checkpoint_files_read_whole(name):
    # the assembled config.json files of Scout and Maverick (tests/configs/assembled/), read as the whole
    # Llama4ForConditionalGeneration: the checkpoints' safetensors totals (test_presets_assembled.py
    # checks the files against them through transformers)
    from test_presets_assembled import ASSEMBLED, CONFIGS

    file, _, total, _ = ASSEMBLED[name]
    m = symgpt.load(str(CONFIGS / file))
    assert m.family.name == "llama4" and m.params == total
