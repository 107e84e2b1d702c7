"""Molmo2 and IDEFICS (``symgpt/families/vlm_held.py``): a decoder of the generic builder with modules
beside it whose parameters are held. On tiny non-default configurations: the parameter count against
transformers' own model (``sum(p.numel())``, on the meta device), each held module's share against
its module, Molmo2's forward over token ids against ``FlopCounterMode`` on a tiny CPU model, and
the refusals (an image; IDEFICS's forward)."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import symgpt

_MOLMO2 = {
    "text_config": {"vocab_size": 300, "additional_vocab_size": 7, "hidden_size": 64, "intermediate_size": 96,
                    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                    "max_position_embeddings": 256, "rope_scaling_layers": [0]},
    "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3, "num_attention_heads": 4,
                      "num_key_value_heads": 2, "head_dim": 8, "patch_size": 4, "num_position_embeddings": 9,
                      "image_size": [12, 12], "attention_bias": False},
    "adapter_config": {"hidden_size": 32, "intermediate_size": 40, "num_attention_heads": 2, "num_key_value_heads": 1,
                       "head_dim": 16, "text_hidden_size": 64, "vision_feature_layer": [-1, -2, -3],
                       "mlp_bias": True},
}

_IDEFICS = {"vocab_size": 300, "additional_vocab_size": 5, "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 4, "num_attention_heads": 4, "max_position_embeddings": 128,
            "cross_layer_interval": 3, "qk_layer_norms": True, "alpha_type": "vector",
            "vision_config": {"embed_dim": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 2,
                              "image_size": 28, "patch_size": 7},
            "use_resampler": True,
            "perceiver_config": {"resampler_depth": 2, "resampler_n_heads": 2, "resampler_head_dim": 8,
                                 "resampler_n_latents": 5, "qk_layer_norms_perceiver": True}}


def _write(tmp_path, cls: str, config) -> str:
    path = tmp_path / "config.json"
    cfg = json.loads(config.to_json_string(use_diff=False))
    path.write_text(json.dumps({**cfg, "architectures": [cls]}))
    return str(path)


def _meta(cls, config):
    with torch.device("meta"):
        return getattr(transformers, cls)._from_config(config)


def _share(m, prefix: str) -> int:
    return sum(v for p, v in m.quantity("params").values().items() if p.startswith(prefix))


def _numel(module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_molmo2_params_and_held_modules(tmp_path):
    config = transformers.Molmo2Config(**_MOLMO2)
    model = _meta("Molmo2ForConditionalGeneration", config)
    m = symgpt.load(_write(tmp_path, "Molmo2ForConditionalGeneration", config))
    assert m.params == _numel(model)
    assert _share(m, "vision_tower/") == _numel(model.model.vision_tower)
    assert _share(m, "multi_modal_projector/") == _numel(model.model.multi_modal_projector)
    assert m.family.name == "molmo2" and m.flags["extra_rows"] == 7


def test_molmo2_forward_over_token_ids(tmp_path):
    # the forward over token ids against FlopCounterMode: the vision tower and the adapter do not run
    config = transformers.Molmo2Config(**_MOLMO2)
    torch.manual_seed(0)
    model = transformers.Molmo2ForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    ids = torch.tensor([[3, 17, 299, 301, 9, 10, 11]])  # 301: one of the extra rows
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, use_cache=False)
    path = _write(tmp_path, "Molmo2ForConditionalGeneration", config)
    assert symgpt.load(path, B=1, T=ids.shape[1]).quantity("flops.forward") == fcm.get_total_flops()


def test_molmo2_refuses_an_image_and_a_post_norm_text(tmp_path):
    config = transformers.Molmo2Config(**_MOLMO2)
    path = _write(tmp_path, "Molmo2ForConditionalGeneration", config)
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0"):
        symgpt.load(path, N_img=1).params
    cfg = json.loads(open(path).read())
    cfg["text_config"]["norm_after"] = True
    (tmp_path / "post.json").write_text(json.dumps(cfg))
    with pytest.raises(symgpt.SymgptError, match="norm_after"):
        symgpt.load(str(tmp_path / "post.json"))


@pytest.mark.parametrize("changes", [
    {},                                                                        # resampler, vector gates, norms
    {"use_resampler": False, "alpha_type": "float", "qk_layer_norms": False, "cross_layer_interval": 1},
    {"tie_word_embeddings": True},                                             # the head's extra rows tied
])
def test_idefics_params_and_held_modules(tmp_path, changes):
    config = transformers.IdeficsConfig(**{**_IDEFICS, **changes})
    model = _meta("IdeficsForVisionText2Text", config)
    m = symgpt.load(_write(tmp_path, "IdeficsForVisionText2Text", config))
    assert m.params == _numel(model)
    for prefix, module in (("vision_model/", model.model.vision_model),
                           ("gated_cross_attn_layers/", model.model.gated_cross_attn_layers)):
        assert _share(m, prefix) == _numel(module)
    if config.use_resampler:
        assert _share(m, "perceiver_resampler/") == _numel(model.model.perceiver_resampler)


def test_idefics_forward_is_refused(tmp_path):
    # IdeficsModel needs images in every forward: asking for one is refused in one line
    config = transformers.IdeficsConfig(**_IDEFICS)
    path = _write(tmp_path, "IdeficsForVisionText2Text", config)
    with pytest.raises(symgpt.SymgptError, match="forward is not modelled") as err:
        symgpt.load(path, B=1, T=8).quantity("flops.forward")
    assert "\n" not in str(err.value)
    m = symgpt.load(path)
    assert any("parameters only" in n for n in m.notes)
    # a symbolic request (B, T unbound) is refused too, not answered with the decoder alone
    for quantity in ("flops.forward", "flops.train"):
        with pytest.raises(symgpt.SymgptError, match="forward is not modelled"):
            m.quantity(quantity)


_EVOLLA = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 5,
           "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 128,
           "aligner_num_add_layers": 2, "aligner_ffn_mult": 3, "aligner_enable_bias": False,
           "resampler_depth": 2, "resampler_dim_head": 8, "resampler_heads": 2, "resampler_num_latents": 5,
           "resampler_ff_mult": 2,
           "protein_encoder_config": {"vocab_size": 40, "hidden_size": 32, "num_hidden_layers": 2,
                                      "num_attention_heads": 2, "intermediate_size": 48,
                                      "max_position_embeddings": 66}}


@pytest.mark.parametrize("changes", [
    {},                                                                        # adapters at layers 2 and 4
    {"attention_bias": True, "mlp_bias": True, "aligner_num_add_layers": 8,   # an adapter at every layer
     "protein_encoder_config": {**_EVOLLA["protein_encoder_config"], "position_embedding_type": "absolute",
                                "emb_layer_norm_before": True}},
    {"tie_word_embeddings": True},                                             # the class ties nothing
])
def test_evolla_params_and_held_modules(tmp_path, changes):
    config = transformers.EvollaConfig(**{**_EVOLLA, **changes})
    model = _meta("EvollaForProteinText2Text", config)
    m = symgpt.load(_write(tmp_path, "EvollaForProteinText2Text", config))
    assert m.params == _numel(model)
    assert _share(m, "protein_encoder/") == _numel(model.model.protein_encoder)
    assert _share(m, "adapters/") == sum(_numel(layer.adapter) for layer in model.model.layers
                                         if hasattr(layer, "adapter"))


def test_evolla_forward_without_a_protein(tmp_path):
    # without protein_input_ids the adapters are skipped: the LLaMA decoder's forward, against FlopCounterMode
    config = transformers.EvollaConfig(**{**_EVOLLA, "attention_bias": True})
    torch.manual_seed(0)
    model = transformers.EvollaForProteinText2Text._from_config(config, attn_implementation="eager").eval()
    ids = torch.tensor([[3, 17, 299, 9, 10, 11]])
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, use_cache=False)
    path = _write(tmp_path, "EvollaForProteinText2Text", config)
    assert symgpt.load(path, B=1, T=ids.shape[1]).quantity("flops.forward") == fcm.get_total_flops()
    assert any("without a protein" in n for n in symgpt.load(path).notes)


_KOSMOS2_5 = {"latent_query_num": 6,
              "text_config": {"vocab_size": 300, "embed_dim": 64, "ffn_dim": 96, "layers": 2, "attention_heads": 4,
                              "max_position_embeddings": 128},
              "vision_config": {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
                                "num_attention_heads": 2, "head_dim": 8, "patch_embed_hidden_size": 12,
                                "max_num_patches": 20}}


def test_kosmos2_5_params_and_held_modules(tmp_path):
    config = transformers.Kosmos2_5Config(**_KOSMOS2_5)
    model = _meta("Kosmos2_5ForConditionalGeneration", config)
    m = symgpt.load(_write(tmp_path, "Kosmos2_5ForConditionalGeneration", config))
    assert m.params == _numel(model)
    for prefix, module in (("vision_model/", model.vision_model),
                           ("image_to_text_projection/", model.image_to_text_projection)):
        assert _share(m, prefix) == _numel(module)


def test_kosmos2_5_forward_over_token_ids(tmp_path):
    # without flattened_patches neither the vision encoder nor the resampler runs: against FlopCounterMode
    config = transformers.Kosmos2_5Config(**_KOSMOS2_5)
    torch.manual_seed(0)
    model = transformers.Kosmos2_5ForConditionalGeneration._from_config(config, attn_implementation="eager").eval()
    ids = torch.tensor([[0, 17, 299, 9, 10, 11, 2]])
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, use_cache=False)
    path = _write(tmp_path, "Kosmos2_5ForConditionalGeneration", config)
    assert symgpt.load(path, B=1, T=ids.shape[1]).quantity("flops.forward") == fcm.get_total_flops()
    with pytest.raises(symgpt.SymgptError, match="N_img must be 0"):
        symgpt.load(path, N_img=1).params


_PP = {"text_config": {"vocab_size": 300, "d_model": 64, "decoder_layers": 2, "decoder_attention_heads": 4,
                       "decoder_ffn_dim": 96, "max_position_embeddings": 40},
       "vision_config": {"hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4, "mlp_dim": 48,
                         "image_size": 64, "patch_size": 8, "window_size": 3, "global_attn_indexes": [1, 7],
                         "output_channels": 12, "post_conv_in_channels": 12, "post_conv_mid_channels": 20,
                         "post_conv_out_channels": 24, "decoder_hidden_size": 64}}


@pytest.mark.parametrize("changes", [
    {},                                                                        # one global layer of three
    {"use_rel_pos": False, "use_abs_pos": False, "qkv_bias": False},
])
def test_pp_formulanet_params_and_held_encoder(tmp_path, changes):
    config = transformers.PPFormulaNetConfig(**{**_PP, "vision_config": {**_PP["vision_config"], **changes}})
    model = _meta("PPFormulaNetForConditionalGeneration", config)
    path = _write(tmp_path, "PPFormulaNetForConditionalGeneration", config)
    m = symgpt.load(path)
    assert m.params == _numel(model)
    assert _share(m, "model/encoder/") == _numel(model.model.encoder)
    # the decoder reads the image in every layer: its forward is refused in one line
    with pytest.raises(symgpt.SymgptError, match="forward is not modelled") as err:
        symgpt.load(path, B=1, T=8).quantity("flops.forward")
    assert "\n" not in str(err.value)
    with pytest.raises(symgpt.SymgptError, match="forward is not modelled"):
        m.quantity("flops.forward")  # symbolic (B, T unbound): refused too


_T5G_TEXT = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
             "num_key_value_heads": 2, "head_dim": 16, "max_position_embeddings": 128, "sliding_window": 8}


def _t5gemma2(tie=True, head=True):
    enc = transformers.T5Gemma2EncoderConfig(
        text_config={**_T5G_TEXT, "num_hidden_layers": 3, "intermediate_size": 80, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "head_dim": 24},
        vision_config={"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8, "vision_use_head": head}, mm_tokens_per_image=4)
    dec = transformers.T5Gemma2DecoderConfig(**{**_T5G_TEXT, "num_hidden_layers": 2})
    return transformers.T5Gemma2Config(encoder=enc, decoder=dec, tie_word_embeddings=tie)


@pytest.mark.parametrize("tie, head", [(True, True), (False, True), (True, False)])
def test_t5gemma2_params_and_held_encoder(tmp_path, tie, head):
    config = _t5gemma2(tie, head)
    model = _meta("T5Gemma2ForConditionalGeneration", config)
    path = _write(tmp_path, "T5Gemma2ForConditionalGeneration", config)
    m = symgpt.load(path)
    assert m.params == _numel(model)
    assert _share(m, "model/encoder/vision_tower/") == _numel(model.model.encoder.vision_tower)
    with pytest.raises(symgpt.SymgptError, match="forward is not modelled") as err:
        symgpt.load(path, B=1, T=8).quantity("flops.forward")
    assert "\n" not in str(err.value)
    with pytest.raises(symgpt.SymgptError, match="forward is not modelled"):
        m.quantity("flops.forward")  # symbolic (B, T unbound): refused too
