"""Roles: every node of every built-in family says what it is, and consumers can find it."""

import pytest
import sympy

import symgpt
from symgpt.graph import roles
from symgpt.core.errors import SymgptError
from symgpt.families import families
from symgpt.graph.arch import Builder
from symgpt import ops
from symgpt.core.symbols import B, L, T, d, V


#: the encoder, encoder-decoder and vision families, an encoder-decoder's decoder alone:
#: tests/test_encdec_roles.py
ENCDEC = {"bert", "roberta", "distilbert", "t5", "bart", "transformer", "vit",
          "camembert", "xlm-roberta", "data2vec-text", "ernie", "seq2seq_decoder", "electra",
          "megatron_bert", "xlm_roberta_xl", "roberta_prelayernorm", "bert_generation",
          "roformer", "rembert", "roc_bert", "xmod", "big_bird", "xlm",
          # speech: Whisper's encoder--decoder and Qwen2-Audio's audio tower beside its decoder (their
          # stacks and roles: tests/test_whisper.py, tests/test_audio_lm.py)
          "whisper", "qwen2_audio",
          # speech models beyond Whisper: an audio encoder beside a decoder (Voxtral) or encoder--decoders
          # over features (Pop2Piano, Speech2Text): tests/test_voxtral.py, test_pop2piano.py, test_speech_to_text.py,
          # test_moonshine.py
          "voxtral", "pop2piano", "speech_to_text", "moonshine",
          # image and speech models (Pix2Struct, ViT + BERT, BLIP-2): tests/test_pix2struct.py,
          # tests/test_vision_encoder_decoder.py, tests/test_blip2.py
          "pix2struct", "vision-encoder-decoder", "blip-2", "instructblip", "instructblipvideo",
          "blip",  # tests/test_blip.py
          "kosmos-2",  # tests/test_kosmos2.py
          # speech models with a held audio tower: tests/test_qwen3_asr.py, test_granite_speech.py
          "qwen3_asr", "granite_speech", "granite_speech_plus",
          # Llama 3.2 Vision and Qwen2.5-VL: towers and cross-attention layers held beside the text
          # decoder (their stacks and roles: tests/test_mllama.py, tests/test_qwen_vl.py)
          "mllama", "mllama_text", "qwen2_5_vl",
          # Qwen2-VL: its vision tower held beside the text decoder (tests/test_vlm_readers.py)
          "qwen2_vl",
          # a decoder of another family with a held vision tower (tests/test_vlm_towers_text.py)
          "qwen3_vl", "qwen3_vl_moe", "qwen3_5_vl", "qwen3_5_moe_vl", "glm4v", "glm4v_moe", "glm_ocr",
          "exaone4_5", "qwen2_5_omni_thinker", "qwen3_omni_moe_thinker", "video_llama_3", "paddleocr_vl",
          "kimi_k25",
          "cosmos3_edge",  # the same (tests/test_vlm_towers_text2.py)
          # Llama 4's vision encoder, MiniCPM-V's and HyperCLOVA X Vision's held towers beside
          # the text decoder (tests/test_llama4_vision.py, tests/test_minicpmv.py,
          # tests/test_hyperclovax_vision.py)
          "llama4", "minicpmv", "hyperclovax_vision",
          # vision--language models, second wave: held towers beside the decoder (tests/test_vlm_zoo.py)
          "lfm3_vl", "granite_docling", "git", "florence2", "udop",
          # speech encoder--decoders whose speech encoder is held beside the decoder (tests/test_speecht5.py,
          # tests/test_canary.py, tests/test_speech_encoder_decoder.py, tests/test_seamless_m4t.py)
          "speecht5", "canary", "cohere_asr", "speech-encoder-decoder", "seamless_m4t", "seamless_m4t_v2",
          # Voxtral Realtime: a held audio tower beside its decoder (tests/test_voxtral_realtime.py)
          "voxtral_realtime",
          # VibeVoice: speech tokenizers held beside a Qwen2 decoder (tests/test_vibevoice.py)
          "vibevoice_asr", "vibevoice",
          # Kyutai speech-to-text: the Mimi codec held (tests/test_kyutai.py)
          "kyutai_speech_to_text",
          # IDEFICS, Evolla: cross-attention layers held beside the decoder, a stack of their own;
          # PP-FormulaNet, T5Gemma 2: a decoder beside a held encoder (tests/test_vlm_held.py)
          "idefics", "evolla", "pp_formulanet", "t5gemma2",
          # a decoder of another family beside a held vision or audio tower (tests/test_held_towers.py)
          "ovis2", "omniasr", "fun_asr_nano", "nemotron_h_omni", "janus",
          # more decoders beside a held vision tower (tests/test_vlm_held_moe.py)
          "minimax_m3_vl", "step3p7", "ernie4_5_vl_moe", "unlimited_ocr"}


#: families without a dropout flag (Gemma 4, the state-space families) or whose block refuses it
#: (multi-latent attention: no dropout layers in transformers' DeepseekV3DecoderLayer)
def _with_dropout(family, dropout):
    flags = families()[family].flags
    try:
        return symgpt.load(family, **({"dropout": dropout} if "dropout" in flags else {})).arch
    except symgpt.SymgptError as e:
        assert dropout and "flag dropout is not modelled" in str(e), e
        return None


#: the state-space families and the hybrids whose recurrent layers hold no KV cache (their stacks
#: and roles: tests/test_ssm.py, tests/test_hybrid.py, tests/test_gated_delta.py, tests/test_recurrent.py)
STATE_SPACE = {"mamba", "mamba2", "hybrid", "hybrid1",
               "qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "lara_mini",
               # RWKV and xLSTM: recurrent blocks only, under the checkpoint's own prefixes
               # (tests/test_recurrent.py)
               "rwkv", "xlstm",
               # linear-attention hybrids (their roles and caches: tests/test_lightning.py, tests/test_kda.py)
               "minimax", "kimi_linear", "bailing_hybrid",
               # shared transformer blocks among Mamba layers (their stacks and ties: tests/test_zamba.py)
               "zamba", "zamba2"}


#: where the vision towers' and resamplers' stacks live (the text decoder's stacks aside)
VISION_STACKS = ("vision_tower/", "vision_model/", "image_tower/", "video_tower/", "vision_encoder/",
                 "high_res_vision_model/", "connector/")


@pytest.mark.parametrize("family,dropout", [
    (f, drop) for drop in (False, True) for f in sorted(set(families()) - ENCDEC - STATE_SPACE)
    if not drop or "dropout" in families()[f].flags])   # (Gemma 4 has no dropout flag)
def test_every_op_has_a_role(family, dropout):
    arch = _with_dropout(family, dropout)
    if arch is None:
        return
    missing = [n for n, a in arch.ops() if arch.role(n) is None]
    assert missing == []
    # one stack of L layers, or layers that differ as a sequence of stacks whose counts add to L
    # (DeepSeek's dense layers before its MoE layers, Gemma's sliding and full layers)
    # (a vision tower's stack runs over its patches, beside the text decoder: tests/test_vlm.py)
    stacks = [g for g in arch.stacks() if not g.name.startswith(VISION_STACKS)]
    # (CPM-Ant's layers run over its prompt positions too: T + prompt_length)
    assert "blocks" in [g.name for g in stacks] and all(g.length == T or family == "cpmant" for g in stacks)
    assert sympy.simplify(sum(g.repeat for g in stacks) - L) == 0
    # one token embedding, one LM head (the logits, soft-capped or scaled after it), what a cache holds
    assert len(arch.find(roles.TOKEN_EMBEDDING)) == 1
    assert arch.output in (arch.first(roles.HEAD), arch.first(roles.LOGIT_SOFTCAP), arch.first(roles.LOGIT_SCALE))
    cached = roles.LATENT_CACHE if arch.find(roles.KV_LATENT) else roles.PLAIN_CACHE
    assert all(arch.find(r, stack=g.name) for r in cached for g in stacks)
    assert arch.stack_of(arch.first(roles.HEAD)) is None


def test_mixture_declares_experts():
    arch = symgpt.load("mixtral").arch
    (experts,) = arch.groups_with(roles.EXPERTS)
    assert arch.find(roles.FFN_UP) == [f"{experts.name}/up"]
    assert arch.stack_of(f"{experts.name}/up") == "blocks"


def test_declared_roles_free_the_paths():
    g = Builder("free")
    ids = g.input("tokens", (B, T), role=roles.TOKENS)
    x = g.op("wte", ops.Embedding(V, d), ids, role=roles.TOKEN_EMBEDDING)
    with g.repeat("h", L, carry=x):
        x = g.op("mlp/c_fc", ops.Linear(d, 4 * d), x, role=roles.FFN_UP)
    arch = g.build(output=x)
    assert arch.find(roles.FFN_UP) == ["h/mlp/c_fc"]
    assert arch.first(roles.TOKEN_EMBEDDING) == "wte"
    assert [s.name for s in arch.stacks()] == ["h"]


def test_unknown_role_is_refused():
    g = Builder("bad")
    ids = g.input("input_ids", (B, T))
    with pytest.raises(SymgptError, match="unknown role"):
        g.op("x", ops.Embedding(V, d), ids, role="attention.qq")
