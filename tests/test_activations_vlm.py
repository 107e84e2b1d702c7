"""``memory.activations`` of vision--language models with images, against the bytes PyTorch really
saves: a tiny real transformers model of each (``...ForConditionalGeneration._from_config``: a
2-layer decoder of d = 64, a 2- or 3-layer vision tower of d_v = 32 over 28×28 images in 7×7
patches, fp32, CPU, ``attn_implementation="eager"``) runs one training-mode forward with
``pixel_values`` under ``torch.autograd.graph.saved_tensors_hooks`` (tests/oracles/measure.py:
every saved storage once, parameters excluded), and symgpt counts the same config at the same B,
T and N_img (images per sequence). The conventions are test_activations_families.py's:
``pytorch-cpu`` (``hf-eager``), fp32, the causal mask an added float tensor, the loss left out,
dropout (and InternViT's stochastic depth) off; B = 2, and B = 1 with one image (where some
copies before a linear are views).

What the vision side keeps, as transformers' code runs it (ops in symgpt/ops/vision_saved.py):

- CLIP's and SigLIP's positions are an ``nn.Embedding`` looked up with the (1, n) ``position_ids``
  buffer: the lookup keeps the int64 ids (Idefics3 computes (B·N_img, n) ids, one row per image);
- ``inputs_embeds.masked_scatter(mask, features)`` keeps its (B, T, 1) bool mask;
- SigLIP's attention-pooling head (``nn.MultiheadAttention``, batch first) projects a
  sequence-first copy of the patches, which its key projection keeps;
- Gemma 3's projector norm keeps its 1 + w only when the images run.

With N_img = 0 (the model's forward without ``pixel_values``) none of these is kept.
"""

from __future__ import annotations

import json

import pytest
import torch
import transformers

import symgpt
from oracles.measure import saved_tensors

B = 2
IMG = 5  # the image token id
TEXT = {"model_type": "llama", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256}
TOWER = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 2,
         "image_size": 28, "patch_size": 7}
PIXTRAL = {"model_type": "pixtral", **TOWER}
INTERNVIT = {**TOWER, "image_size": [28, 28], "patch_size": [7, 7]}
GEMMA3_TEXT = {"model_type": "gemma3_text", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 96,
               "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
               "query_pre_attn_scalar": 32, "sliding_window": 512, "max_position_embeddings": 256}


def _stacked(n, b):
    return {"pixel_values": torch.rand(b * n, 3, 28, 28)}


def _per_sequence(n, b):  # Idefics3: (batch, images, C, H, W)
    return {"pixel_values": torch.rand(b, n, 3, 28, 28)}


def _sized(n, b):  # Pixtral: every image's (height, width)
    return {"pixel_values": torch.rand(b * n, 3, 28, 28), "image_sizes": torch.tensor([[28, 28]] * (b * n))}


def _gemma3(head):
    return {"model_type": "gemma3", "mm_tokens_per_image": 4, "image_token_index": IMG, "boi_token_index": 6,
            "eoi_token_index": 7, "text_config": GEMMA3_TEXT,
            "vision_config": {"model_type": "siglip_vision_model", **TOWER, "vision_use_head": head}}


#: case -> (config.json, transformers class, image tokens per image, the image inputs for N_img images,
#: whether the forward takes token_type_ids)
CASES = {
    # CLIP (class token, pre-LayerNorm), the class token dropped, a 2-layer MLP projector
    "llava": ({"model_type": "llava", "image_token_index": IMG, "vision_feature_layer": -2,
               "vision_feature_select_strategy": "default", "projector_hidden_act": "gelu", "text_config": TEXT,
               "vision_config": {"model_type": "clip_vision_model", **TOWER, "num_hidden_layers": 3,
                                 "hidden_act": "gelu"}}, "LlavaForConditionalGeneration", 16, _stacked, False),
    "llava-full": ({"model_type": "llava", "image_token_index": IMG, "vision_feature_layer": -1,
                    "vision_feature_select_strategy": "full", "text_config": TEXT,
                    "vision_config": {"model_type": "clip_vision_model", **TOWER, "hidden_act": "gelu"}},
                   "LlavaForConditionalGeneration", 17, _stacked, False),
    # SigLIP, 2×2 average pool, RMSNorm (1 + w) and a linear; with and without the pooling head
    "gemma3": (_gemma3(False), "Gemma3ForConditionalGeneration", 4, _stacked, True),
    "gemma3-head": (_gemma3(True), "Gemma3ForConditionalGeneration", 4, _stacked, True),
    "shieldgemma2": ({**_gemma3(False), "model_type": "shieldgemma2"}, "Gemma3ForConditionalGeneration", 4,
                     _stacked, True),
    # SigLIP with its pooling head (vision_use_head's default), one linear projector, a Gemma decoder
    "paligemma": ({"model_type": "paligemma", "image_token_index": IMG, "projection_dim": 64, "hidden_size": 64,
                   "text_config": {"model_type": "gemma", "vocab_size": 300, "hidden_size": 64,
                                   "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 2,
                                   "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 256},
                   "vision_config": {"model_type": "siglip_vision_model", **TOWER, "projection_dim": 64}},
                  "PaliGemmaForConditionalGeneration", 16, _stacked, True),
    # Idefics3's SigLIP-style tower (per-image position ids), a 2×2 pixel shuffle, one linear
    "idefics3": ({"model_type": "idefics3", "image_token_id": IMG, "scale_factor": 2, "text_config": TEXT,
                  "vision_config": {"model_type": "idefics3_vision", **TOWER}},
                 "Idefics3ForConditionalGeneration", 4, _per_sequence, False),
    "smolvlm": ({"model_type": "smolvlm", "image_token_id": IMG, "scale_factor": 2, "text_config": TEXT,
                 "vision_config": {"model_type": "smolvlm_vision", **TOWER}},
                "SmolVLMForConditionalGeneration", 4, _per_sequence, False),
    # Pixtral's tower (2-D rotary, one packed sequence), a 2×2 patch merger
    "mistral3": ({"model_type": "mistral3", "image_token_index": IMG, "spatial_merge_size": 2,
                  "text_config": {**TEXT, "model_type": "mistral", "head_dim": 16}, "vision_config": PIXTRAL},
                 "Mistral3ForConditionalGeneration", 4, _sized, False),
    "lighton_ocr": ({"model_type": "lighton_ocr", "image_token_id": IMG, "spatial_merge_size": 2,
                     "text_config": {**TEXT, "model_type": "qwen3", "head_dim": 16}, "vision_config": PIXTRAL},
                    "LightOnOcrForConditionalGeneration", 4, _sized, False),
    # InternViT (class token dropped, λ scales), a pixel shuffle, a LayerNorm + 2-layer MLP projector
    "internvl": ({"model_type": "internvl", "image_token_id": IMG, "downsample_ratio": 0.5,
                  "text_config": {**TEXT, "model_type": "qwen2"},
                  "vision_config": {"model_type": "internvl_vision", **INTERNVIT}},
                 "InternVLForConditionalGeneration", 4, _stacked, False),
    "internvl-rms": ({"model_type": "internvl", "image_token_id": IMG, "downsample_ratio": 0.5, "text_config": TEXT,
                      "vision_config": {"model_type": "internvl_vision", **INTERNVIT, "norm_type": "rms_norm",
                                        "use_qk_norm": True, "attention_bias": True, "use_mean_pooling": False,
                                        "use_mask_token": True}},
                     "InternVLForConditionalGeneration", 4, _stacked, False),
    # drop_path_rate 0: stochastic depth is dropout (its default 0.1 keeps a (B·N, 1, 1) draw a layer)
    "qianfan_ocr": ({"model_type": "qianfan_ocr", "image_token_id": IMG, "downsample_ratio": 0.5,
                     "text_config": {**TEXT, "model_type": "qwen3"},
                     "vision_config": {"model_type": "qianfan_ocr_vision", **INTERNVIT, "attention_bias": True,
                                       "drop_path_rate": 0.0}},
                    "QianfanOCRForConditionalGeneration", 4, _stacked, False),
}

#: the model types whose saved tensors with images are compared here (test_activations_families.py's
#: test_every_decoder_family_is_compared counts them as compared)
COMPARED = frozenset(cfg["model_type"] for cfg, *_ in CASES.values())


def _model(case):
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    cfg, name, *_ = CASES[case]
    cls = getattr(transformers, name)
    config = cls.config_class(**{k: v for k, v in cfg.items() if k != "model_type"})
    torch.manual_seed(0)
    return cls._from_config(config, attn_implementation="eager").float()


def _ids(case, n, b=B):
    t = CASES[case][2]
    return torch.tensor([[2] + [IMG] * (t * n) + [9, 10, 11]] * b)  # n images' tokens between text tokens


def _measured(case, n, b=B):
    _cfg, _name, _t, images, token_types = CASES[case]
    ids = _ids(case, n, b)

    def forward(m):
        kw = dict(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
        if token_types:  # Gemma 3 and PaliGemma train with the image tokens marked
            kw["token_type_ids"] = (ids == IMG).long()
        if n:
            torch.manual_seed(1)
            kw.update(images(n, b))
        return m(**kw).logits

    return saved_tensors(_model(case), b, ids.shape[1], forward=forward)


def _counted(case, n, tmp_path, b=B, **opts):
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(CASES[case][0]))
    m = symgpt.load(path, B=b, T=_ids(case, n, b).shape[1], N_img=n, loss=False)
    return m.quantity("memory.activations", convention="pytorch-cpu", precision="fp32", causal_mask_saved=False,
                      implementation="hf-eager", **opts)


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_activations_with_images_equal_saved_tensors(case, n, tmp_path):
    measured = sum(e["nbytes"] for e in _measured(case, n))
    assert _counted(case, n, tmp_path).value == measured


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_image_in_all(case, tmp_path):
    """B = 1 and one image: LLaVA's x[:, 1:] is then contiguous and nn.MultiheadAttention's transpose
    moves a dimension of 1, so the linear after either keeps its input's storage, no copy
    (PaliGemma's projector and its pooling head keep the same tensor)."""
    measured = sum(e["nbytes"] for e in _measured(case, 1, b=1))
    assert _counted(case, 1, tmp_path, b=1).value == measured


def test_the_image_mask_and_the_position_ids_are_kept(tmp_path):
    """LLaVA with one image a sequence: the masked scatter keeps a (B, T, 1) bool mask (B·T bytes)
    and CLIP's lookup keeps its (1, n + 1) int64 ids (8·17 bytes); neither is kept without images."""
    T = _ids("llava", 1).shape[1]
    kept = {(e["shape"], e["dtype"]) for e in _measured("llava", 1)}
    assert {((B, T, 1), torch.bool), ((1, 17), torch.int64)} <= kept
    parts = _counted("llava", 1, tmp_path).values()
    assert parts["merge_image_tokens"] == B * T
    assert parts["vision_tower/embeddings/position_embedding"] == 8 * 17
    none = _counted("llava", 0, tmp_path).values()
    assert none["merge_image_tokens"] == 0 and none["vision_tower/embeddings/position_embedding"] == 0


def test_the_pooling_head_keeps_a_sequence_first_copy(tmp_path):
    """Gemma 3 with SigLIP's pooling head: the head's key projection keeps a copy of the B·N_img·n·d_v
    patches (4 bytes each), so the head costs that much more than its own tensors; measured, the
    difference between the two towers is the head's tensors and this copy."""
    with_head = sum(e["nbytes"] for e in _measured("gemma3-head", 1))
    without = sum(e["nbytes"] for e in _measured("gemma3", 1))
    q = _counted("gemma3-head", 1, tmp_path).values()
    assert q["vision_tower/head/attention/in_proj_k"] == B * 16 * 32 * 4  # the copy, not the post-LN output
    assert with_head - without == sum(v for k, v in q.items() if k.startswith("vision_tower/head/"))
