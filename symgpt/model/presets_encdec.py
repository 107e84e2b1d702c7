"""Presets of the encoder, encoder--decoder and vision families: data rows, each with its source.
Every row equals the model ``symgpt.load("<the checkpoint's config.json>")`` reads
(tests/configs/encdec/ holds those files), except where its note says otherwise; the original
Transformer's rows come from its paper."""

from __future__ import annotations

from .preset import Preset

_HF = "its config.json on the Hugging Face Hub"
_VASWANI = ("Vaswani et al. 2017 (Attention Is All You Need), Table 3; shared source-target "
            "vocabulary (Sec. 5.1, Sec. 3.4)")
_VOCAB_NOTE = ("assumption: a shared source-target vocabulary of V = 37,000 tokens (the paper's "
               "WMT 2014 English-German byte-pair vocabulary, 'about 37000 tokens', Sec. 5.1), tied to both "
               "embeddings and the pre-softmax layer (Sec. 3.4); every linear layer and LayerNorm has a "
               "bias (the paper does not say). The paper's Table 3 rounds the count to {paper}; "
               "symgpt's exact count under these assumptions is {exact}")

ROWS: tuple[Preset, ...] = (
    Preset("bert-base", "bert", {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 30522, "T_max": 512},
           flags={"head": "mlm"},
           source="Devlin et al. 2019 (BERT), Sec. 3; google-bert/bert-base-uncased " + _HF,
           note="BertForMaskedLM (the masked-LM head, decoder tied to the token embedding); the paper "
                "says 110M; head=pooler counts BertModel (109,482,240)"),
    Preset("roberta-base", "roberta", {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 50265, "T_max": 512},
           flags={"head": "mlm", "type_vocab": 1, "pos_offset": 2},
           source="Liu et al. 2019 (RoBERTa); FacebookAI/roberta-base " + _HF,
           note="the position table has T_max + 2 = 514 rows (positions start after the padding index)"),
    Preset("distilbert-base", "distilbert", {"L": 6, "h": 12, "d": 768, "d_ff": 3072, "V": 30522, "T_max": 512},
           flags={"head": "mlm"},
           source="Sanh et al. 2019 (DistilBERT); distilbert/distilbert-base-uncased " + _HF),
    Preset("t5-small", "t5", {"L": 6, "L_dec": 6, "h": 8, "d_head": 64, "d": 512, "d_ff": 2048, "V": 32128},
           source="Raffel et al. 2020 (T5), Sec. 3.7; google-t5/t5-small " + _HF,
           note="the paper says 60M; the vocabulary is 32,128 rows (32,000 pieces padded)"),
    Preset("t5-base", "t5", {"L": 12, "L_dec": 12, "h": 12, "d_head": 64, "d": 768, "d_ff": 3072, "V": 32128},
           source="Raffel et al. 2020 (T5), Sec. 3.7; google-t5/t5-base " + _HF, note="the paper says 220M"),
    Preset("bart-base", "bart", {"L": 6, "L_dec": 6, "h": 12, "d": 768, "d_ff": 3072, "V": 50265, "T_max": 1024},
           flags={"head": "lm"},
           source="Lewis et al. 2020 (BART); facebook/bart-base " + _HF,
           note="counted as BartForConditionalGeneration (the tied LM head); the checkpoint's config "
                "names BartModel, which head=none counts (the same parameters: the head is tied)"),
    Preset("vit-base", "vit",
           {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "S_img": 224, "P_patch": 16, "C_img": 3, "N_cls": 1000},
           flags={"head": "classifier"},
           source="Dosovitskiy et al. 2021 (ViT), Table 1 (ViT-Base, 86M); google/vit-base-patch16-224 " + _HF,
           note="224 x 224 images in 16 x 16 patches: T = (224/16)^2 + 1 = 197; ImageNet's 1,000 classes"),
    Preset("transformer-base", "transformer", {"L": 6, "L_dec": 6, "h": 8, "d": 512, "d_ff": 2048, "V": 37000},
           source=_VASWANI, note=_VOCAB_NOTE.format(paper="65M", exact="63,082,496")),
    Preset("transformer-big", "transformer", {"L": 6, "L_dec": 6, "h": 16, "d": 1024, "d_ff": 4096, "V": 37000},
           source=_VASWANI, note=_VOCAB_NOTE.format(paper="213M", exact="214,245,376")),
)
