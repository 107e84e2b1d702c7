"""Reading the config.json of encoders, encoder--decoders and ViT: transformers' defaults for
missing fields, the head chosen by ``architectures`` (``--head`` overriding it), transformers'
field aliases, and one clear error line for what symgpt does not model."""

import json
from pathlib import Path

import pytest

import symgpt
from symgpt import SymgptError
from symgpt.cli import main
from symgpt.model.model import from_config as from_dict

from oracles.hf_encdec import build, params

CONFIGS = Path(__file__).parent / "configs" / "encdec"

#: model_type -> (a few sizes set, the class transformers builds by default for the head symgpt picks)
SMALL = {
    "bert": ({"num_hidden_layers": 2}, "BertForMaskedLM"),
    "roberta": ({"num_hidden_layers": 2}, "RobertaForMaskedLM"),
    "distilbert": ({"n_layers": 2}, "DistilBertForMaskedLM"),
    "t5": ({}, "T5ForConditionalGeneration"),
    "bart": ({"encoder_layers": 2, "decoder_layers": 2}, "BartForConditionalGeneration"),
    "vit": ({"num_hidden_layers": 2}, "ViTForImageClassification"),
}


@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_missing_fields_take_transformers_defaults(model_type):
    sizes, cls = SMALL[model_type]
    cfg = {"model_type": model_type, **sizes}
    m = from_dict(cfg, model_type)
    assert m.params == params(build(cfg, cls)), model_type
    assert m.notes == ()


@pytest.mark.parametrize("arch,head", [("BertForMaskedLM", "mlm"), ("BertModel", "pooler"),
                                       ("BertForPreTraining", None)])
def test_the_head_follows_architectures(arch, head):
    cfg = {"model_type": "bert", "num_hidden_layers": 2, "architectures": [arch]}
    if head is None:  # its NSP head is not modelled: refused, not counted as another class
        with pytest.raises(SymgptError, match="architectures names BertForPreTraining"):
            from_dict(cfg, "x")
        return
    m = from_dict(cfg, "x")
    assert m.flags["head"] == head
    assert m.notes == ()


def test_head_option_overrides_architectures(capsys):
    path = CONFIGS / "bert-base-uncased.json"
    assert main(["params", str(path), "--head", "pooler"]) == 0
    pooled = capsys.readouterr().out
    assert "109,482,240" in pooled  # BertModel: params(build(cfg, "BertModel")), checked below
    cfg = json.loads(path.read_text())
    assert params(build(cfg, "BertModel")) == 109_482_240
    assert main(["params", "t5-small", "--head", "pooler"]) == 2
    assert "head takes one of lm, none" in capsys.readouterr().err


def test_t5_untied_head_is_counted_as_the_config_says_and_tied_true_is_transformers():
    """A config with tie_word_embeddings=false holds its own LM head (the T5 v1.1 checkpoints do:
    tests/test_verify.py checks such a checkpoint's tensors); transformers 5 ties T5's head
    whatever the field says (T5Config sets it True and keeps the field only as
    scale_decoder_outputs): tied=true counts that model."""
    from transformers import AutoConfig

    hf = AutoConfig.for_model("t5", tie_word_embeddings=False)
    assert hf.tie_word_embeddings is True and hf.scale_decoder_outputs is False
    m = from_dict({"model_type": "t5", "tie_word_embeddings": False}, "x")
    assert m.flags["tied"] is False and m.flags["head_scale"] is False
    assert any("tie_word_embeddings=false" in n and "tied=true" in n for n in m.notes)
    forced = m.with_(tied=True)
    assert m.params.value - forced.params.value == 32128 * 512  # the head's own V x d matrix
    cfg = from_dict({"model_type": "t5"}, "x")
    assert cfg.flags["tied"] is True and cfg.flags["head_scale"] is True


def test_aliases_win_as_in_transformers():
    from transformers import AutoConfig

    hf = AutoConfig.for_model("bart", encoder_layers=2, num_hidden_layers=3)
    m = from_dict({"model_type": "bart", "encoder_layers": 2, "num_hidden_layers": 3}, "x")
    assert m.sizes["L"] == hf.encoder_layers == 3


def test_vit_classes_from_the_label_table():
    cfg = json.loads((CONFIGS / "vit-base-patch16-224.json").read_text())
    assert symgpt.load(CONFIGS / "vit-base-patch16-224.json").sizes["N_cls"] == len(cfg["id2label"]) == 1000
    assert from_dict({"model_type": "vit"}, "x").sizes["N_cls"] == 2  # transformers' default num_labels


@pytest.mark.parametrize("cfg,message", [
    ({"model_type": "bert", "position_embedding_type": "relative_key"}, "position_embedding_type"),
    ({"model_type": "bert", "is_decoder": True}, "decoder"),
    ({"model_type": "bart", "decoder_ffn_dim": 1}, "different heads or FFN widths"),
    ({"model_type": "bart", "add_final_layer_norm": True}, "mBART"),
    ({"model_type": "t5", "feed_forward_proj": "gated-gelu-x"}, "feed_forward_proj"),
    ({"model_type": "vit", "pooler_output_size": 5}, "pooler"),
    ({"model_type": "roberta", "max_position_embeddings": 2}, "pad_token_id"),
    ({"model_type": "bert", "architectures": "BertModel"}, "architectures"),
])
def test_unsupported_fields_are_one_clear_error(cfg, message):
    with pytest.raises(SymgptError, match=message):
        from_dict(cfg, "x")
