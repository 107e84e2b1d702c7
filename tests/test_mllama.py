"""Llama 3.2 Vision (``symgpt/families/mllama.py``): parameters against transformers'
``MllamaForCausalLM`` and ``MllamaForConditionalGeneration`` built on the meta device from
non-default configurations (cross-attention layers at other indices, a vision tower with other
tiles, aspect ratios and global layers), and the forward over token ids against
``FlopCounterMode`` (transformers skips the cross-attention layers and runs no vision tower
without images)."""

from __future__ import annotations

import json

import pytest

import torch
import transformers

import symgpt  # noqa: E402

TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 5,
        "num_attention_heads": 4, "num_key_value_heads": 2, "cross_attention_layers": [1, 3],
        "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "max_position_embeddings": 256}
VISION = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3, "num_global_layers": 2,
          "attention_heads": 2, "image_size": 28, "patch_size": 7, "max_num_tiles": 2, "vision_output_dim": 96,
          "intermediate_layers_indices": [0, 2], "supported_aspect_ratios": [[1, 1], [1, 2], [2, 1]]}


def _flops(model, ids) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    return fcm.get_total_flops()


def _write(tmp_path, cfg) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


@pytest.mark.parametrize("cross", [[1, 3], [0], [0, 1, 2, 3]])
def test_text_model_params_and_flops(tmp_path, cross):
    text = {**TEXT, "cross_attention_layers": cross}
    config = transformers.MllamaTextConfig(**text)
    torch.manual_seed(0)
    model = transformers.MllamaForCausalLM._from_config(config, attn_implementation="eager").eval()
    path = _write(tmp_path, {"model_type": "mllama_text_model", "architectures": ["MllamaForCausalLM"], **text})
    m = symgpt.load(path, B=2, T=12)
    assert m.params == sum(p.numel() for p in model.parameters())
    ids = torch.randint(3, 300, (2, 12))
    assert m.quantity("flops.forward") == _flops(model, ids)
    # the 8 rows past vocab_size and the held cross-attention layers are their own rows of the breakdown
    parts = m.quantity("params").values()
    held = sum(v for p, v in parts.items() if p.startswith("cross_blocks/"))
    assert held == sum(p.numel() for i in cross for p in model.model.layers[i].parameters())


def test_conditional_generation_params_and_text_flops(tmp_path):
    cfg = {"model_type": "mllama", "architectures": ["MllamaForConditionalGeneration"],
           "text_config": TEXT, "vision_config": VISION}
    config = transformers.MllamaConfig(text_config=TEXT, vision_config=VISION)
    torch.manual_seed(0)
    model = transformers.MllamaForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    m = symgpt.load(_write(tmp_path, cfg), B=1, T=9)
    assert m.params == sum(p.numel() for p in model.parameters())
    parts = m.quantity("params").values()
    assert sum(v for p, v in parts.items() if p.startswith("vision_model/")) == \
        sum(p.numel() for p in model.model.vision_model.parameters())
    ids = torch.randint(3, 300, (1, 9))
    assert m.quantity("flops.forward") == _flops(model, ids)
    assert any("not modelled" in n for n in m.notes)


def test_default_conditional_generation_params_on_meta():
    with torch.device("meta"):
        model = transformers.MllamaForConditionalGeneration(transformers.MllamaConfig())
    from symgpt.model.model import from_config

    assert from_config({"model_type": "mllama"}, "x").params == sum(p.numel() for p in model.parameters())


def test_bad_cross_layers_refused(tmp_path):
    from symgpt.core.errors import SymgptError

    for cross in ([1, 1], [7], "3"):
        path = _write(tmp_path, {"model_type": "mllama_text_model", **TEXT, "cross_attention_layers": cross})
        with pytest.raises(SymgptError):
            symgpt.load(path).params


def test_cross_attention_cache_per_image_as_the_note_says(tmp_path):
    """transformers' cache after a forward with two images: each cross-attention layer holds keys
    (and values) over N_img·max_num_tiles·((S_img/P_patch)²+1) positions, h_kv heads of d_head."""
    import re

    config = transformers.MllamaConfig(text_config=TEXT, vision_config=VISION, image_token_index=299)
    torch.manual_seed(0)
    model = transformers.MllamaForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    n_img, tiles = 2, VISION["max_num_tiles"]
    ids = torch.tensor([[1, 299, 299, 7, 8, 9]])
    with torch.no_grad():
        out = model(input_ids=ids, pixel_values=torch.rand(1, n_img, tiles, 3, 28, 28),
                    aspect_ratio_ids=torch.tensor([[2, 1]]), aspect_ratio_mask=torch.tensor([[[1, 1], [1, 0]]]),
                    cross_attention_mask=torch.ones(1, 6, n_img, tiles, dtype=torch.long), use_cache=True)
    held = sum(layer.keys.numel() + layer.values.numel() for i, layer in enumerate(out.past_key_values.layers)
               if i in TEXT["cross_attention_layers"])
    m = symgpt.load(_write(tmp_path, {"model_type": "mllama", "text_config": TEXT, "vision_config": VISION}))
    note = next(x for x in m.notes if x.startswith("KV cache with images"))
    assert int(re.search(r"([\d,]+) values per image", note).group(1).replace(",", "")) * n_img == held


def test_images_refused_not_counted_as_text():
    from symgpt.model.model import from_config

    m = from_config({"model_type": "mllama"}, "x")
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0"):
        m.with_(B=1, T=8, N_img=2).quantity("flops.forward")
