"""Encoders, encoder--decoders and ViT against transformers: parameters and FLOPs.

For each public config.json in tests/configs/encdec/ (see tests/configs/README.md) and each head
its family models, symgpt's parameter count equals ``sum(p.numel() for p in model.parameters())``
of the matching transformers class (``BertForMaskedLM``, ``BertModel``, ``T5ForConditionalGeneration``,
``T5Model``, ``BartForConditionalGeneration``, ``BartModel``, ``ViTForImageClassification``,
``ViTModel``, ...) built on the meta device, and the default convention's forward and forward +
backward FLOPs equal ``FlopCounterMode`` on it (eager attention), with the encoder's and the
decoder's sequence lengths varied independently. Published counts are the checkpoints' model
cards / papers where one is well known.
"""

import json
from pathlib import Path

import pytest

import symgpt
from oracles.hf_encdec import build, flops, params

CONFIGS = Path(__file__).parent / "configs" / "encdec"
FILES = sorted(p.name for p in CONFIGS.glob("*.json"))

#: config file -> (family, {head: transformers class}, layer fields, count of the config's own class)
TABLE = {
    "bert-base-uncased.json": ("bert", {"mlm": "BertForMaskedLM", "pooler": "BertModel"},
                               ("num_hidden_layers",), 109_514_298),
    "roberta-base.json": ("roberta", {"mlm": "RobertaForMaskedLM", "pooler": "RobertaModel"},
                          ("num_hidden_layers",), 124_697_433),
    "distilbert-base-uncased.json": ("distilbert", {"mlm": "DistilBertForMaskedLM", "none": "DistilBertModel"},
                                     ("n_layers",), 66_985_530),
    "t5-small.json": ("t5", {"lm": "T5ForConditionalGeneration", "none": "T5Model"},
                      ("num_layers", "num_decoder_layers"), 60_506_624),
    "t5-base.json": ("t5", {"lm": "T5ForConditionalGeneration", "none": "T5Model"},
                     ("num_layers", "num_decoder_layers"), 222_903_552),
    "t5-v1_1-small.json": ("t5", {"lm": "T5ForConditionalGeneration", "none": "T5Model"},
                           ("num_layers", "num_decoder_layers"), None),
    "bart-base.json": ("bart", {"lm": "BartForConditionalGeneration", "none": "BartModel"},
                       ("encoder_layers", "num_hidden_layers", "decoder_layers"), 139_420_416),
    "vit-base-patch16-224.json": ("vit", {"classifier": "ViTForImageClassification", "pooler": "ViTModel"},
                                  ("num_hidden_layers",), 86_567_656),
}
CASES = [(f, head) for f in FILES for head in TABLE[f][1]]
#: flags that make symgpt count what transformers 5 builds where the config says otherwise: it
#: ties T5's LM head even when tie_word_embeddings is false (T5 v1.1); symgpt counts the config's
TRANSFORMERS_FLAGS = {"t5-v1_1-small.json": {"tied": True}}
B = 2
#: (T_enc, T_dec): the two lengths varied independently (an encoder uses the first as T)
LENGTHS = ((8, 5), (5, 8), (3, 3))


def test_every_config_file_is_in_the_table():
    assert FILES == sorted(TABLE)
    assert {fam for fam, *_ in TABLE.values()} == {"bert", "roberta", "distilbert", "t5", "bart", "vit"}


def _bind(m, T_enc, T_dec):
    if m.family.name in ("t5", "bart"):
        return m.with_(B=B, T_enc=T_enc, T_dec=T_dec)
    if m.family.name == "vit":
        return m.with_(B=B)
    return m.with_(B=B, T=T_enc)


@pytest.mark.parametrize("name,head", CASES)
def test_params_and_forward_flops_match_transformers(name, head):
    cfg = json.loads((CONFIGS / name).read_text())
    family, classes, _layers, published = TABLE[name]
    m = symgpt.load(CONFIGS / name, head=head, **TRANSFORMERS_FLAGS.get(name, {}))
    assert m.family.name == family
    hf = build(cfg, classes[head])
    n = params(hf)
    assert m.params == n, (name, head, m.params.value, n)
    if published is not None and head == symgpt.load(CONFIGS / name).flags["head"]:
        assert n == published
    for T_enc, T_dec in LENGTHS if family in ("t5", "bart") else LENGTHS[:1]:
        assert _bind(m, T_enc, T_dec).quantity("flops.forward") == flops(hf, B, T_enc, T_dec), (T_enc, T_dec)


@pytest.mark.parametrize("name,head", CASES)
def test_forward_and_backward_flops_match_transformers(name, head):
    """Forward + backward of the output's sum, on the config cut to 2 layers per stack (tracing
    backward through 12 layers is slow even on meta)."""
    cfg = json.loads((CONFIGS / name).read_text())
    family, classes, layers, _ = TABLE[name]
    short = {**cfg, **{k: 2 for k in layers}}
    hf = build(short, classes[head])
    m = symgpt.load(CONFIGS / name, head=head, L=2, **({"L_dec": 2} if family in ("t5", "bart") else {}),
                    **TRANSFORMERS_FLAGS.get(name, {}))
    for T_enc, T_dec in LENGTHS[:2] if family in ("t5", "bart") else LENGTHS[:1]:
        assert _bind(m, T_enc, T_dec).quantity("flops.train") == flops(hf, B, T_enc, T_dec, backward=True)


def test_decoder_layers_differ_from_encoder_layers(tmp_path):
    """T5 and BART count the decoder's L_dec blocks apart from the encoder's L; a config's
    ``num_hidden_layers`` (transformers' alias of ``num_layers`` / ``encoder_layers``) wins, as
    it does in transformers."""
    for name, fields in (("t5-small.json", ("num_hidden_layers", "num_decoder_layers")),
                         ("bart-base.json", ("num_hidden_layers", "decoder_layers"))):
        cfg = {**json.loads((CONFIGS / name).read_text()), fields[0]: 3, fields[1]: 1}
        path = tmp_path / name
        path.write_text(json.dumps(cfg))
        hf = build(cfg, TABLE[name][1]["lm"])
        m = symgpt.load(path, head="lm", B=B, T_enc=6, T_dec=4)
        assert (m.sizes["L"], m.sizes["L_dec"]) == (3, 1)
        assert m.params == params(hf)
        assert m.quantity("flops.forward") == flops(hf, B, 6, 4)
