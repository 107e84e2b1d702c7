"""Saved activations of encoders and encoder--decoders, measured: tiny transformers models (fp32,
CPU, eager attention, training mode; dropout 0, and 0.1 in the dropout cases) under ``saved_tensors_hooks``
(tests/oracles/measure.py: every distinct non-parameter storage autograd keeps, by storage),
against ``memory.activations`` under the ``pytorch-cpu`` convention.

What transformers does that the graph states: BERT and DistilBERT slice their position ids from
a buffer of all T_max positions, which stays whole; RoBERTa computes (B, T) position ids from
the tokens; BERT's pooler reads X[:, 0], a view that keeps the whole last hidden state alive;
T5's LayerNorm is unfused (it keeps x·rstd too); T5 v1.1's "gelu_new" is written out of
elementwise ops and keeps four tensors; BART expands its encoder's position ids over the batch
(its decoder's stay one row); an encoder's output, read by every decoder layer, is one tensor. Bidirectional attention adds no mask that is saved, and
neither does eager attention's causal mask (added as a float tensor): ``causal_mask_saved=False``.
Token-type ids are passed (B, T), as a tokenizer returns them.
"""

import sys
from pathlib import Path

import pytest
import sympy
import torch

import symgpt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracles.hf_encdec import build, inputs  # noqa: E402
from oracles.measure import saved_tensors  # noqa: E402

B, T_ENC, T_DEC = 3, 7, 5
OPTS = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)

BERTISH = dict(vocab_size=97, hidden_size=16, num_attention_heads=4, intermediate_size=40,
               max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
SIZES = dict(d=16, h=4, V=97, d_ff=40, T_max=32)
T5SIZES = dict(d=16, h=4, V=97, d_ff=40)
BARTISH = dict(model_type="bart", vocab_size=97, d_model=16, encoder_layers=2, decoder_layers=3,
               encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=40, decoder_ffn_dim=40,
               max_position_embeddings=32, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
T5ISH = dict(model_type="t5", vocab_size=97, d_model=16, d_kv=4, d_ff=40, num_heads=4, dropout_rate=0.0,
             relative_attention_num_buckets=8)

#: (transformers config, class, labels passed, symgpt family, flags, sizes)
CASES = {
    "bert-pooler-1": ({"model_type": "bert", "num_hidden_layers": 1, **BERTISH}, "BertModel", False,
                      "bert", {"head": "pooler"}, dict(L=1, **SIZES)),
    "bert-mlm-2": ({"model_type": "bert", "num_hidden_layers": 2, **BERTISH}, "BertForMaskedLM", False,
                   "bert", {"head": "mlm"}, dict(L=2, **SIZES)),
    "bert-mlm-loss-2": ({"model_type": "bert", "num_hidden_layers": 2, **BERTISH}, "BertForMaskedLM", True,
                        "bert", {"head": "mlm"}, dict(L=2, **SIZES)),
    "roberta-mlm-2": ({"model_type": "roberta", "num_hidden_layers": 2, "type_vocab_size": 1, "pad_token_id": 1,
                       **{**BERTISH, "max_position_embeddings": 34}}, "RobertaForMaskedLM", False,
                      "roberta", {"head": "mlm"}, dict(L=2, **SIZES)),
    "distilbert-mlm-2": ({"model_type": "distilbert", "n_layers": 2, "dim": 16, "n_heads": 4, "hidden_dim": 40,
                          "vocab_size": 97, "max_position_embeddings": 32, "dropout": 0.0, "attention_dropout": 0.0},
                         "DistilBertForMaskedLM", False, "distilbert", {"head": "mlm"}, dict(L=2, **SIZES)),
    "t5-1": ({**T5ISH, "num_layers": 1, "num_decoder_layers": 1}, "T5ForConditionalGeneration", False,
             "t5", {}, dict(L=1, L_dec=1, **T5SIZES)),
    "t5-3-2": ({**T5ISH, "num_layers": 3, "num_decoder_layers": 2}, "T5ForConditionalGeneration", False,
               "t5", {}, dict(L=3, L_dec=2, **T5SIZES)),
    "t5-loss-2": ({**T5ISH, "num_layers": 2, "num_decoder_layers": 2}, "T5ForConditionalGeneration", True,
                  "t5", {}, dict(L=2, L_dec=2, **T5SIZES)),
    "t5-v1.1-2-3": ({**T5ISH, "num_layers": 2, "num_decoder_layers": 3, "feed_forward_proj": "gated-gelu",
                     "tie_word_embeddings": False}, "T5ForConditionalGeneration", False,
                    "t5", {"ffn": "gated", "activation": "gelu_new", "head_scale": False}, dict(L=2, L_dec=3, **T5SIZES)),
    "t5-model-2": ({**T5ISH, "num_layers": 2, "num_decoder_layers": 2}, "T5Model", False,
                   "t5", {"head": "none"}, dict(L=2, L_dec=2, **T5SIZES)),
    "bart-2-3": (BARTISH, "BartForConditionalGeneration", False, "bart", {}, dict(L=2, L_dec=3, T_max=32, **T5SIZES)),
    "bart-loss-2-3": (BARTISH, "BartForConditionalGeneration", True, "bart", {},
                      dict(L=2, L_dec=3, T_max=32, **T5SIZES)),
    # dropout active (p = 0.1): PyTorch on CPU keeps each mask in the activation dtype
    "bert-dropout-2": ({"model_type": "bert", "num_hidden_layers": 2, **BERTISH, "hidden_dropout_prob": 0.1,
                        "attention_probs_dropout_prob": 0.1}, "BertForMaskedLM", False,
                       "bert", {"head": "mlm", "dropout": True}, dict(L=2, **SIZES)),
    "t5-dropout-2": ({**T5ISH, "num_layers": 2, "num_decoder_layers": 2, "dropout_rate": 0.1},
                     "T5ForConditionalGeneration", False, "t5", {"dropout": True}, dict(L=2, L_dec=2, **T5SIZES)),
    "bart-dropout-2-3": ({**BARTISH, "dropout": 0.1, "attention_dropout": 0.1, "activation_dropout": 0.1},
                         "BartForConditionalGeneration", False, "bart", {"dropout": True},
                         dict(L=2, L_dec=3, T_max=32, **T5SIZES)),
}


def _measure(cfg, cls, labels):
    torch.manual_seed(0)
    tm = build(cfg, cls, device="cpu")

    def forward(model):
        kw = inputs(model, B, T_ENC, T_DEC)
        if cfg["model_type"] == "bert":
            kw["token_type_ids"] = torch.randint(0, 2, (B, T_ENC))
        if labels:
            shape = (B, T_DEC) if "decoder_input_ids" in kw else (B, T_ENC)
            kw["labels"] = torch.randint(0, cfg["vocab_size"], shape)
        return model(**kw)

    return sum(e["nbytes"] for e in saved_tensors(tm, B, T_ENC, dtype=torch.float32, forward=forward))


@pytest.mark.parametrize("case", sorted(CASES))
def test_activations_equal_saved_tensors_hooks(case):
    cfg, cls, labels, family, flags, sizes = CASES[case]
    measured = _measure(cfg, cls, labels)
    lengths = dict(T_enc=T_ENC, T_dec=T_DEC) if family in ("t5", "bart") else dict(T=T_ENC)
    buckets = {"buckets": 8} if family == "t5" else {}
    m = symgpt.load(family, B=B, **lengths, **sizes, **flags, **buckets,
                    **({"d_head": 4} if family == "t5" else {}))
    q = m.quantity("memory.activations", loss_saved=labels, **OPTS)
    assert q == measured, (case, q.value, measured)


@pytest.mark.parametrize("family,cfg,cls,sizes", [
    ("t5", {**T5ISH, "num_layers": 2, "num_decoder_layers": 3}, "T5ForConditionalGeneration",
     dict(L=2, L_dec=3, d_head=4, buckets=8, **T5SIZES)),
    ("bart", {"model_type": "bart", "vocab_size": 97, "d_model": 16, "encoder_layers": 3, "decoder_layers": 2,
              "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 40,
              "decoder_ffn_dim": 40, "max_position_embeddings": 32}, "BartForConditionalGeneration",
     dict(L=3, L_dec=2, T_max=32, **T5SIZES)),
])
def test_kv_cache_is_what_transformers_caches(family, cfg, cls, sizes):
    """Every decoder layer caches its self-attention K, V (T_dec positions) and its
    cross-attention K, V of the encoder's output (T_enc positions); the encoder caches nothing."""
    from oracles.hf_encdec import kv_cache_bytes

    torch.manual_seed(0)
    measured = kv_cache_bytes(build(cfg, cls, device="cpu"), B, T_ENC, T_DEC)
    m = symgpt.load(family, B=B, T_enc=T_ENC, T_dec=T_DEC, **sizes)
    q = m.quantity("memory.kv_cache", precision="fp32")
    assert q == measured
    # by hand: 2 (K and V) x L_dec x B x h x d_head x (T_dec + T_enc) x 4 bytes
    assert measured == 2 * sizes["L_dec"] * B * 16 * (T_DEC + T_ENC) * 4


@pytest.mark.parametrize("model", ["bert-base", "vit-base"])
def test_an_encoder_alone_caches_nothing(model):
    assert symgpt.load(model, B=1, T=16).quantity("memory.kv_cache") == 0


def test_full_recompute_keeps_block_inputs_and_the_encoder_output_once():
    """Under full recomputation each stack keeps one input per layer (the residual stream), and
    a tensor every decoder layer reads unchanged -- the encoder's output, each stack's relative
    position bias -- once: by hand, for T5 in fp32."""
    from symgpt.core.symbols import B as B_, L, L_dec, T_dec, T_enc, d, h

    m = symgpt.load("t5")
    full = m.quantity("memory.activations", precision="fp32", recompute="full")
    kept = {k: v for k, v in full.breakdown if k.endswith("/checkpoint")}
    assert sympy.expand(kept["encoder/block/checkpoint"]
                        - 4 * (L * B_ * T_enc * d + h * T_enc**2)) == 0
    assert sympy.expand(kept["decoder/block/checkpoint"]
                        - 4 * (L_dec * B_ * T_dec * d + h * T_dec**2 + B_ * T_enc * d)) == 0
    # BART's encoder output is its last layer's output (no final norm): kept once for the decoder
    bart = dict(symgpt.load("bart").quantity("memory.activations", precision="fp32", recompute="full").breakdown)
    assert sympy.expand(bart["decoder/layers/checkpoint"] - 4 * (L_dec * B_ * T_dec * d + B_ * T_enc * d)) == 0


@pytest.mark.parametrize("name", ["t5-small", "bart-base", "transformer-base"])
def test_tensor_parallel_splits_self_and_cross_attention(name):
    """Megatron's split (Korthikanti §4.2.1): every projection of self- and cross-attention and
    of the FFN is split tp ways, and so is the vocabulary-parallel embedding (tied to the head);
    norms, T5's relative-bias tables and BART's position tables are replicated, and so are the
    biases of the row-parallel projections (added after the all-reduce): per encoder layer the
    attention output's and fc2's, per decoder layer also the cross-attention output's. By hand."""
    m = symgpt.load(name)
    tp = 2
    replicated = sum(v for k, v in m.params.values().items()
                     if any(s in k for s in ("norm", "relative_attention_bias", "embed_positions")))
    if m.family.name != "t5":  # T5 has no biases
        s = m.sizes
        replicated += (2 * s["L"] + 3 * s["L_dec"]) * s["d"]
    split = m.params.value - replicated
    w = m.quantity("memory.weights", precision="fp32", tp=tp)
    assert w == 4 * (split / tp + replicated)


VITISH = dict(model_type="vit", hidden_size=16, num_attention_heads=4, intermediate_size=40, image_size=8,
              patch_size=4, num_channels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=5)
VITSIZES = dict(d=16, h=4, d_ff=40, S_img=8, P_patch=4, C_img=3, N_cls=5)


@pytest.mark.parametrize("L,cls,labels,flags", [
    (1, "ViTForImageClassification", False, {"head": "classifier"}),
    (2, "ViTForImageClassification", True, {"head": "classifier"}),
    (2, "ViTModel", False, {"head": "pooler"}),
    (2, "ViTForImageClassification", True, {"head": "classifier", "dropout": True}),
])
def test_vit_activations_equal_saved_tensors_hooks(L, cls, labels, flags):
    """A tiny ViT (8×8 images of 3 channels, 4×4 patches: T = 5) in fp32 on CPU: what autograd
    saves -- the pixels (read by the patch convolution), each layer's tensors, the class token's
    (B, d) slice, and with labels the cross-entropy's log-softmax, int64 targets and scalar
    weight -- equals symgpt's ``pytorch-cpu`` activations."""
    cfg = {**VITISH, "num_hidden_layers": L}
    if flags.get("dropout"):
        cfg.update(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    torch.manual_seed(0)
    tm = build(cfg, cls, device="cpu")

    def forward(model):
        kw = inputs(model, B)
        if labels:
            kw["labels"] = torch.randint(0, cfg["num_labels"], (B,))
        return model(**kw)

    measured = sum(e["nbytes"] for e in saved_tensors(tm, B, 0, dtype=torch.float32, forward=forward))
    m = symgpt.load("vit", B=B, L=L, **VITSIZES, **flags)
    q = m.quantity("memory.activations", loss_saved=labels, **OPTS)
    assert q == measured, (cls, L, labels, flags, q.value, measured)
