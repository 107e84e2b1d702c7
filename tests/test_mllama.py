"""Llama 3.2 Vision (``symgpt/families/mllama.py``): parameters against transformers'
``MllamaForCausalLM`` and ``MllamaForConditionalGeneration`` built on the meta device from
non-default configurations (cross-attention layers at other indices, a vision tower with other
tiles, aspect ratios and global layers), and the forward over token ids against
``FlopCounterMode`` (transformers skips the cross-attention layers and runs no vision tower
without images); with images (``vision_run``): the forward, a decode step and the KV cache against
``FlopCounterMode`` and the cache of the same tiny models fed real pixel tensors."""

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
    assert any(n.startswith("without vision_run the forward counted is over token ids") for n in m.notes)


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


# --- images (vision_run): the tiled tower, the projector and the cross-attention layers run
IMAGE_TOKEN = 299


def _image_model(vision):
    config = transformers.MllamaConfig(text_config=TEXT, vision_config=vision, image_token_index=IMAGE_TOKEN)
    torch.manual_seed(0)
    return transformers.MllamaForConditionalGeneration._from_config(config, attn_implementation="eager").eval()


def _image_inputs(vision, n_img, T):
    """Token ids with n_img <|image|> tokens, every tile slot's pixels (the second image fills one
    tile of max_num_tiles: the rest are masked, still computed), the masks transformers reads."""
    tiles, side = vision["max_num_tiles"], vision["image_size"]
    ids = torch.tensor([[1] + [IMAGE_TOKEN] * n_img + list(range(7, 7 + T - 1 - n_img))])
    mask = torch.ones(1, n_img, tiles, dtype=torch.long)
    mask[0, -1, 1:] = 0
    return dict(input_ids=ids, pixel_values=torch.rand(1, n_img, tiles, 3, side, side),
                aspect_ratio_ids=torch.ones(1, n_img, dtype=torch.long), aspect_ratio_mask=mask,
                cross_attention_mask=torch.ones(1, T, n_img, tiles, dtype=torch.long))


# (image_size, patch_size, max_num_tiles): tiles of 17, 5 and 10 rows, padded by 7, 3 and 6 to 24, 8, 16
@pytest.mark.parametrize("side,patch,tiles", [(28, 7, 2), (28, 14, 3), (21, 7, 1)])
def test_images_forward_and_decode_flops_and_cache(tmp_path, side, patch, tiles):
    vision = {**VISION, "image_size": side, "patch_size": patch, "max_num_tiles": tiles}
    model, n_img, T = _image_model(vision), 2, 7
    inputs = _image_inputs(vision, n_img, T)
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        out = model(**inputs, use_cache=True)
    caches = out.past_key_values.layers  # after the prefill (the decode step below extends it)
    total = sum(c.keys.numel() + c.values.numel() for c in caches)
    cross = TEXT["cross_attention_layers"]
    own = sum(c.keys.numel() + c.values.numel() for i, c in enumerate(caches) if i not in cross)
    new = dict(input_ids=torch.tensor([[11]]), cross_attention_mask=inputs["cross_attention_mask"][:, -1:])
    with FlopCounterMode(display=False) as dec, torch.no_grad():
        model(**new, cache=out.past_key_values, use_cache=True)
    path = _write(tmp_path, {"model_type": "mllama", "text_config": TEXT, "vision_config": vision})
    m = symgpt.load(path, B=1, T=T, N_img=n_img, vision_run=True)
    assert m.params == sum(p.numel() for p in model.parameters())
    assert m.quantity("flops.forward") == fcm.get_total_flops()
    assert m.quantity("inference.prefill.flops") == fcm.get_total_flops()
    # a decode step: one token against the cache (T self-attention positions, the image positions)
    assert m.quantity("inference.decode.flops") == dec.get_total_flops()
    # the cache: the self-attention layers' T positions and the cross-attention layers' image positions
    text = symgpt.load(path, B=1, T=T)
    per_value, rest = divmod(int(text.quantity("inference.kv_cache")), own)  # bytes per cached value
    assert rest == 0 and per_value >= 1
    assert int(m.quantity("inference.kv_cache")) == total * per_value


def test_padded_tile_rows_hand_worked():
    """Llama 3.2 11B Vision (the default MllamaConfig): 448 px tiles of 14 px patches, 32² = 1024
    patches and a class token, 1025 rows padded by 7 to 1032 (a multiple of 8), 4 tiles: one
    sequence of 4128 rows through the vision layers; 4·1025 = 4100 image positions per image."""
    from symgpt.core.symbols import P_patch, S_img
    from symgpt.families.blocks.mllama_vision import ROWS, image_positions
    from symgpt.model.model import from_config

    m = from_config({"model_type": "mllama"}, "x")
    assert m.flags["patch_pad"] == 7 and m.flags["max_tiles"] == 4 and m.flags["intermediate_layers"] == 5
    rows = ROWS.subs({S_img: 448, P_patch: 14})
    assert rows == 1025 and rows + m.flags["patch_pad"] == 1032 == 8 * 129
    assert image_positions(m.flags).subs({S_img: 448, P_patch: 14}) == 4100
    assert m.flags["vision_output_dim"] == (1 + 5) * m.sizes["d_v"] == 7680
    # by hand, one image, T = 16: each of the 32 local layers' Q·Kᵀ over 4128 rows, 2·4128²·1280;
    # the tile mask's outer product 2·4128²; the projector 2·4100·7680·4096; the 8 cross-attention
    # layers' Q·Kᵀ from 16 text positions to 4100 image positions, 2·16·4100·4096 each
    parts = m.with_(B=1, T=16, N_img=1, vision_run=True).quantity("flops.forward").values()
    assert parts["vision_model/transformer/layers/self_attn/scores"] == 32 * 2 * 4128 ** 2 * 1280
    assert parts["vision_model/global_transformer/layers/self_attn/scores"] == 8 * 2 * 4128 ** 2 * 1280
    assert parts["vision_model/attention_mask"] == 2 * 4128 ** 2
    assert parts["multi_modal_projector"] == 2 * 4100 * 7680 * 4096
    assert parts["cross_blocks/cross_attn/scores"] == 8 * 2 * 16 * 4100 * 4096


def test_images_need_an_image_and_a_padding_to_8(tmp_path):
    from symgpt.model.model import from_config

    m = from_config({"model_type": "mllama"}, "x")
    with pytest.raises(symgpt.SymgptError, match="N_img must be at least 1"):
        m.with_(B=1, T=8, N_img=0, vision_run=True).quantity("flops.forward")
    with pytest.raises(symgpt.SymgptError, match="multiple of 8"):
        m.with_(B=1, T=8, N_img=1, vision_run=True, S_img=434).quantity("flops.forward")  # 31² + 1 + 7
    vision = {**VISION, "vision_output_dim": 64}  # not (1 + 2)·32
    path = _write(tmp_path, {"model_type": "mllama", "text_config": TEXT, "vision_config": vision})
    with pytest.raises(symgpt.SymgptError, match="vision_output_dim must be"):
        symgpt.load(path, B=1, T=8, N_img=1, vision_run=True).quantity("flops.forward")
