"""HF-style config.json files: defaults as transformers has them, named unknown fields, and a
clear one-line error for every malformed file."""

import json
from pathlib import Path

import pytest

import symgpt
from symgpt import SymgptError
from symgpt.cli import main
from symgpt.families import readers
from symgpt.model.model import from_config as from_dict

from oracles.measure import hf_param_count

CONFIGS = Path(__file__).parent / "configs"


def write(tmp_path, content, name="cfg.json"):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return p


# --- transformers' defaults -------------------------------------------------------------------
SMALL = {  # a few sizes set, everything else left to the defaults of each configuration class
    "llama": {}, "mistral": {}, "qwen2": {"num_hidden_layers": 4}, "gemma": {"num_hidden_layers": 4},
    "phi3": {}, "falcon": {}, "gpt_neox": {"num_hidden_layers": 4}, "opt": {}, "gpt2": {},
    "mixtral": {"num_hidden_layers": 2},
    # the decoders of Qwen3, Qwen-MoE, Gemma 2/3, Phi-2, StarCoder2 and OLMo 2
    "qwen3": {"num_hidden_layers": 2}, "qwen2_moe": {"num_hidden_layers": 2}, "qwen3_moe": {"num_hidden_layers": 2},
    "gemma2": {"num_hidden_layers": 4}, "gemma3_text": {"num_hidden_layers": 12}, "phi": {},
    "starcoder2": {"num_hidden_layers": 2}, "olmo2": {"num_hidden_layers": 2},
    "deepseek_v2": {"num_hidden_layers": 3, "first_k_dense_replace": 1, "num_experts_per_tok": 6},
    "deepseek_v3": {"num_hidden_layers": 5},
    # types that are an existing block under another name, or one flag away from it
    "exaone": {"num_hidden_layers": 2}, "internlm3": {"num_hidden_layers": 2},
    "iquestcoder": {"num_hidden_layers": 2}, "cwm": {"num_hidden_layers": 8}, "ernie4_5": {},
    "granite": {"num_hidden_layers": 2}, "helium": {"num_hidden_layers": 2}, "ministral3": {"num_hidden_layers": 2},
    "smollm3": {"num_hidden_layers": 8}, "vaultgemma": {"num_hidden_layers": 4}, "glm": {"num_hidden_layers": 2},
    "seed_oss": {"num_hidden_layers": 2}, "olmo3": {"num_hidden_layers": 8}, "hyperclovax": {"num_hidden_layers": 2},
    "granitemoe": {"num_hidden_layers": 2},
    "granitemoeshared": {"num_hidden_layers": 2, "shared_intermediate_size": 1024},
    "sarvam_mla": {"num_hidden_layers": 3},
    # attention variants
    "gpt_oss": {"num_hidden_layers": 4},
    # dense decoders (tests/test_arch_dense.py)
    "bloom": {}, "mpt": {"n_layers": 2}, "gptj": {"n_layer": 2}, "codegen": {"n_layer": 2}, "gpt_neo": {},
    "gpt_bigcode": {}, "openai-gpt": {}, "cohere": {"num_hidden_layers": 2}, "cohere2": {"num_hidden_layers": 4},
    "stablelm": {"num_hidden_layers": 2}, "glm4": {"num_hidden_layers": 2}, "olmo": {"num_hidden_layers": 2},
    "exaone4": {"num_hidden_layers": 4}, "persimmon": {"num_hidden_layers": 2}, "arcee": {"num_hidden_layers": 2},
    "jais2": {"num_hidden_layers": 2}, "nanochat": {}, "xglm": {"num_layers": 2}, "ctrl": {"n_layer": 2},
    "biogpt": {"num_hidden_layers": 2},
    # mixture-of-experts decoders and multi-latent attention (the moe group)
    "olmoe": {"num_hidden_layers": 2}, "minimax_m2": {"num_hidden_layers": 2}, "mellum": {"num_hidden_layers": 2},
    "glm4_moe": {"num_hidden_layers": 3}, "sarvam_moe": {"num_hidden_layers": 2},
    "solar_open": {"num_hidden_layers": 2}, "kolibri1": {"num_hidden_layers": 5}, "phimoe": {"num_hidden_layers": 2},
    "minicpm3": {"num_hidden_layers": 2}, "youtu": {"num_hidden_layers": 2}, "glm4_moe_lite": {"num_hidden_layers": 3},
    # xIELU, BitNet's sub-norms, MLA with a post-MoE norm, Llama 4
    "apertus": {"num_hidden_layers": 2}, "apertus1p5_text": {"num_hidden_layers": 2}, "bitnet": {"num_hidden_layers": 2},
    "axk1": {"num_hidden_layers": 3}, "llama4_text": {"num_hidden_layers": 4},
    # DeepSeek Sparse Attention
    "deepseek_v32": {"num_hidden_layers": 4}, "glm_moe_dsa": {"num_hidden_layers": 4},
    "axk2": {"num_hidden_layers": 3},
    # the decoders with designs of their own
    "gpt_neox_japanese": {"num_hidden_layers": 2},
    # state-space mixers
    "mamba": {"num_hidden_layers": 2}, "falcon_mamba": {"num_hidden_layers": 2}, "mamba2": {"num_hidden_layers": 2},
    # layer kinds as stacks: short convolutions among attention layers, a bare first layer
    "lfm2": {"num_hidden_layers": 2}, "lfm3": {"num_hidden_layers": 6}, "modernbert-decoder": {"num_hidden_layers": 4},
    "rwkv": {"num_hidden_layers": 2}, "recurrent_gemma": {"num_hidden_layers": 3}, "xlstm": {"num_hidden_layers": 2},
    # mixture-of-experts decoders, second group
    "flex_olmo": {"num_hidden_layers": 2}, "aria_text": {"num_hidden_layers": 2},
    "cohere2_moe": {"num_hidden_layers": 4}, "exaone_moe": {"num_hidden_layers": 4},
    "hy_v3": {"num_hidden_layers": 2}, "ernie4_5_moe": {"num_hidden_layers": 3},
    "minimax_m3_vl_text": {"num_hidden_layers": 2},
    # differential attention, dynamic masks, mixtures of attention heads, prompt positions
    "diffllama": {"num_hidden_layers": 2}, "doge": {"num_hidden_layers": 2}, "jetmoe": {"num_hidden_layers": 2},
    "cpmant": {"num_hidden_layers": 2, "tie_word_embeddings": False},  # its head is never tied
    # attention output gates and sinks
    "afmoe": {"num_hidden_layers": 4}, "laguna": {"num_hidden_layers": 2}, "beam": {"num_hidden_layers": 4},
    "flint": {"num_hidden_layers": 3},
    "mimo_v2_flash": {"num_hidden_layers": 2}, "granite_swa": {"num_hidden_layers": 4},
    "granitemoe_swa": {"num_hidden_layers": 4},
    # hybrids of state-space and attention layers
    "bamba": {"num_hidden_layers": 2, "attn_layer_indices": [1]}, "nemotron_h": {},
    "granitemoehybrid": {"num_hidden_layers": 2}, "jamba": {"num_hidden_layers": 2, "attn_layer_offset": 1},
    "falcon_h1": {"num_hidden_layers": 2},
    # Gated DeltaNet hybrids (olmo_hybrid with 3 layers: its last layer made full-attention)
    "qwen3_next": {"num_hidden_layers": 4}, "qwen3_5_text": {"num_hidden_layers": 4},
    "qwen3_5_moe_text": {"num_hidden_layers": 4}, "olmo_hybrid": {"num_hidden_layers": 3},
    "lara_mini": {"num_hidden_layers": 5},
    # linear-attention hybrids: lightning attention (MiniMax), Kimi delta attention among MLA layers
    "minimax": {"num_hidden_layers": 2}, "kimi_linear": {"num_hidden_layers": 5},
    "bailing_hybrid": {"num_hidden_layers": 6},
}
#: the notes a default configuration carries: work with no parameters and no matmul, not counted
DEFAULT_NOTES = {"granite": "multiplies the embeddings", "granitemoe": "multiplies the embeddings",
                 "granitemoeshared": "multiplies the embeddings", "hyperclovax": "multiplies the embeddings",
                 "ministral3": "position-dependent scale", "smollm3": "2 of the 8 layers apply no rotary",
                 "minicpm3": "scale_emb, scale_depth, dim_model_base",
                 "gpt_oss": "clamped SwiGLU", "exaone_moe": "kept in float32", "hy_v3": "kept in float32",
                 "ernie4_5_moe": "moe_statics", "minimax_m3_vl_text": "clamped SwiGLU",
                 "llama4_text": "runs every expert on every token",
                 "deepseek_v32": "counted dense-masked", "glm_moe_dsa": "counted dense-masked",
                 "axk2": "counted dense-masked",
                 "afmoe": "does not train", "laguna": "does not train",
                 "mimo_v2_flash": "partial_rotary_factor", "beam": "scales each residual add",
                 "granite_swa": "multiplies the embeddings",
                 "granitemoe_swa": "multiplies the embeddings",
                 "granitemoehybrid": "multiplies the embeddings", "falcon_h1": "multiplies the embeddings",
                 "xlstm": "max_inference_chunksize"}


#: defaults that carry a note: what the model has and symgpt does not model (MiniCPM3's scalings)
NOTED = {"minicpm3": ("scale_emb, scale_depth, dim_model_base",)}


@pytest.mark.parametrize("model_type", sorted(SMALL))
def test_missing_fields_take_transformers_defaults(model_type):
    cfg = {"model_type": model_type, **SMALL[model_type]}
    m = from_dict(cfg, model_type)
    assert m.params == hf_param_count(cfg), model_type
    if model_type in DEFAULT_NOTES:
        assert len(m.notes) == 1 and DEFAULT_NOTES[model_type] in m.notes[0]
    else:
        assert m.notes == ()


def test_every_model_type_has_a_default_case():
    from symgpt.families import bart, bert, t5, vit  # defaults: tests/test_encdec_configs.py
    from symgpt.families import bert_causal, seq2seq_decoder  # tests/test_seq2seq_decoder.py, test_bert_causal.py
    from symgpt.families import encoder_causal, gemma4  # tests/test_encoder_causal.py, tests/test_gemma4.py
    from symgpt.families import vlm  # tests/test_vlm.py
    from symgpt.families import audio_lm, whisper  # tests/test_audio_lm.py, tests/test_whisper.py
    from symgpt.families import mllama, qwen_vl  # tests/test_mllama.py, tests/test_qwen_vl.py
    from symgpt.families import zamba  # tests/test_zamba.py (and the zoo's default configs)
    # vision--language models with Pixtral, Idefics3, InternViT and other towers: tests/test_vlm_towers.py
    from symgpt.families import cohere2_vision, deepseek_vl, got_ocr2, idefics3, internvl, lfm2_vl, pixtral, video_llava
    from symgpt.families import vlm_towers  # tests/test_vlm_zoo.py (default configs), tests/test_vlm_towers_text.py

    encdec = {t for m in (bert, t5, bart, vit, seq2seq_decoder, bert_causal, gemma4, encoder_causal, vlm, whisper,
                          audio_lm, mllama, qwen_vl, zamba, cohere2_vision, deepseek_vl, got_ocr2, idefics3,
                          internvl, lfm2_vl, pixtral, video_llava, vlm_towers)
              for t in m.READERS}
    assert set(SMALL) | encdec == set(readers())


def test_default_head_counts_follow_transformers():
    # LLaMA: num_key_value_heads None -> h (plain multi-head: h_kv left out of the formulas);
    # Mistral: 8; Falcon multi_query: 1; Gemma: head_dim 256
    assert "h_kv" not in from_dict({"model_type": "llama", "num_attention_heads": 8}, "x").sizes
    assert from_dict({"model_type": "llama", "num_key_value_heads": 4}, "x").sizes["h_kv"] == 4
    assert from_dict({"model_type": "mistral"}, "x").sizes["h_kv"] == 8
    assert from_dict({"model_type": "falcon"}, "x").sizes["h_kv"] == 1
    assert from_dict({"model_type": "falcon", "multi_query": False}, "x").sizes["h_kv"] == 71
    assert from_dict({"model_type": "gemma"}, "x").sizes["d_head"] == 256
    assert "d_head" not in from_dict({"model_type": "llama"}, "x").sizes


def test_sliding_window_and_rotary_fields():
    m = from_dict({"model_type": "mistral", "sliding_window": None}, "x")
    assert m.flags["window"] is False and "W" not in m.sizes
    assert from_dict({"model_type": "mistral"}, "x").sizes["W"] == 4096
    assert from_dict({"model_type": "qwen2"}, "x").flags["window"] is False
    q = from_dict({"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 0,
                   "sliding_window": 512}, "x")
    assert q.flags["window"] and q.sizes["W"] == 512
    with pytest.raises(SymgptError, match="mix full and sliding"):
        from_dict({"model_type": "qwen2", "use_sliding_window": True, "num_hidden_layers": 4,
                   "max_window_layers": 2}, "x")
    assert from_dict({"model_type": "gpt_neox"}, "x").flags["rotary_pct"] == 25
    assert from_dict({"model_type": "gpt_neox", "rotary_pct": 1.0}, "x").flags["rotary_pct"] is None
    phi = from_dict({"model_type": "phi3", "rope_parameters": {"partial_rotary_factor": 0.5}}, "x")
    assert phi.flags["rotary_pct"] == 50
    with pytest.raises(SymgptError, match="whole percentage"):
        from_dict({"model_type": "phi3", "partial_rotary_factor": 0.333}, "x")


# --- notes: named, never guessed --------------------------------------------------------------
def test_unknown_fields_are_named_and_known_ones_stay_silent(tmp_path):
    cfg = json.loads((CONFIGS / "llama-2-7b.json").read_text())
    assert symgpt.load(CONFIGS / "llama-2-7b.json").notes == ()
    cfg.update({"frobnicate_layers": 3, "quantization_config": {"bits": 4}})
    m = symgpt.load(write(tmp_path, json.dumps(cfg)))
    assert m.params == 6_738_415_616
    assert any("'frobnicate_layers'" in n for n in m.notes)
    assert any("'quantization_config'" in n for n in m.notes)
    assert len(m.notes) == 2


def test_unknown_activation_and_dropout_are_noted():
    m = from_dict({"model_type": "llama", "hidden_act": "squared_relu", "attention_dropout": 0.1}, "x")
    assert any("squared_relu" in n for n in m.notes)
    assert any("dropout" in n for n in m.notes)


# --- the model: name, overrides, presets ------------------------------------------------------
def test_name_is_the_file_stem_and_stays_data(tmp_path):
    cfg = (CONFIGS / "opt-125m.json").read_text()
    p = write(tmp_path, cfg, "__import__('os').system('x'); d*2.json")
    m = symgpt.load(p)
    assert m.name == "__import__('os').system('x'); d*2"
    assert m.params == 125_239_296


def test_overrides_set_flags_and_bind_symbols():
    p = CONFIGS / "llama-2-7b.json"
    assert symgpt.load(p, tied=True).params == 6_738_415_616 - 32000 * 4096
    m = symgpt.load(str(p), B=8, T=1024)
    assert m.sizes["B"] == 8 and m.params == 6_738_415_616
    with pytest.raises(SymgptError, match="unknown setting 'colour'"):
        symgpt.load(p, colour=1)
    with pytest.raises(SymgptError, match="flag norm takes one of layernorm, rmsnorm"):
        symgpt.load(p, norm="batchnorm")


@pytest.mark.parametrize("preset,file", [
    ("llama-7b", "llama-2-7b"), ("llama-70b", "llama-2-70b"), ("llama-3-8b", "llama-3-8b"),
    ("mistral-7b", "mistral-7b-v0.1"), ("mixtral-8x7b", "mixtral-8x7b-v0.1"),
    ("qwen2-0.5b", "qwen2-0.5b"), ("gemma-2b", "gemma-2b"), ("phi-3-mini", "phi-3-mini-4k"),
    ("falcon-7b", "falcon-7b"), ("pythia-160m", "pythia-160m"), ("opt-125m", "opt-125m"),
])
def test_presets_are_their_config_files(preset, file):
    p, c = symgpt.load(preset), symgpt.load(CONFIGS / f"{file}.json")
    assert p.family is c.family
    assert p.sizes == c.sizes
    assert p.params == c.params.value
    assert {k: v for k, v in p.flags.items()} == c.flags


def test_seed_000_llama_rows_exactly():
    assert symgpt.load("llama-7b").params == 6_738_415_616
    assert symgpt.load("llama-70b").params == 68_976_648_192
    assert symgpt.load("llama-70b").sizes["h_kv"] == 8


# --- one-line errors --------------------------------------------------------------------------
BAD_FILES = [
    (b"", "is empty"),
    (b"  \n\t ", "is empty"),
    (b"{\"model_type\": \"llama\",", "is not valid JSON"),
    (b"[1, 2]", "must hold a JSON object, got a JSON array"),
    (b"\"llama\"", "must hold a JSON object, got a JSON string"),
    (b"42", "must hold a JSON object, got a JSON number"),
    (b"null", "must hold a JSON object, got a JSON null"),
    (b"\xff\xfe{}", "is not UTF-8"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply|not valid JSON"),
    (b"{}", "missing field 'model_type'"),
    (b"{\"model_type\": 7}", "field 'model_type' must be a string"),
    (b"{\"model_type\": \"wav2vec2\"}",
     "unknown model_type 'wav2vec2'; supported: (\\S+, )*bart, (\\S+, )*bert, (\\S+, )*deepseek_v2, deepseek_v3"),
    (b"{\"model_type\": \"llama\", \"hidden_size\": \"4096\"}", "field 'hidden_size' must be an integer"),
    (b"{\"model_type\": \"llama\", \"hidden_size\": 4096.0}", "field 'hidden_size' must be an integer"),
    (b"{\"model_type\": \"llama\", \"hidden_size\": true}", "field 'hidden_size' must be an integer"),
    (b"{\"model_type\": \"llama\", \"num_hidden_layers\": 0}", "field 'num_hidden_layers' must be positive"),
    (b"{\"model_type\": \"llama\", \"num_attention_heads\": -4}", "'num_attention_heads' must be positive"),
    (b"{\"model_type\": \"llama\", \"tie_word_embeddings\": \"no\"}", "must be true or false"),
    (b"{\"model_type\": \"llama\", \"hidden_act\": 3}", "field 'hidden_act' must be a string"),
    (b"{\"model_type\": \"llama\", \"hidden_size\": 100, \"num_attention_heads\": 3}",
     "d must be divisible by h"),
    (b"{\"model_type\": \"llama\", \"num_key_value_heads\": 5}", "h must be a multiple of h_kv"),
    (b"{\"model_type\": \"mixtral\", \"num_experts_per_tok\": 9}", "k \\(experts per token\\) must not exceed E"),
    (b"{\"model_type\": \"gpt_neox\", \"rotary_pct\": 2}", "must be in \\(0, 1\\]"),
    (b"{\"model_type\": \"opt\", \"layer_norm_elementwise_affine\": false}", "not supported"),
    (b"{\"model_type\": \"falcon\", \"new_decoder_architecture\": true, \"parallel_attn\": false}",
     "not a buildable Falcon"),
    (b"{\"model_type\": \"qwen2\", \"layer_types\": \"full\"}", "must be a list of strings"),
    (b"{\"model_type\": \"phi3\", \"rope_parameters\": 3}", "'rope_parameters' must be an object"),
]


@pytest.mark.parametrize("content,message", BAD_FILES)
def test_malformed_configs_give_one_line_errors(tmp_path, content, message):
    p = write(tmp_path, content)
    with pytest.raises(SymgptError, match=message) as e:
        symgpt.load(p)
    assert "\n" not in str(e.value)
    assert str(p) in str(e.value) or "cfg" in str(e.value)


def test_missing_file_directory_and_huge_file(tmp_path):
    with pytest.raises(SymgptError, match="no such file"):
        symgpt.load(tmp_path / "absent.json")
    with pytest.raises(SymgptError, match="is a directory with no config.json"):
        symgpt.load(tmp_path)
    with pytest.raises(SymgptError, match="larger than"):
        symgpt.load(write(tmp_path, b"{" + b" " * (2 << 20) + b"}"))


def test_cli_reads_a_config_and_fails_in_one_line(tmp_path, capsys):
    assert main(["params", str(CONFIGS / "pythia-160m.json"), "--json"]) == 0
    out, _ = capsys.readouterr()
    data = json.loads(out)
    assert data["model"] == "pythia-160m" and data["params"]["value"] == 162_322_944
    assert main(["params", str(write(tmp_path, b"[]"))]) == 2
    _, err = capsys.readouterr()
    assert err.startswith("symgpt: error: ") and err.count("\n") == 1


def test_a_checkpoint_folder_is_read_through_its_config_json(tmp_path):
    folder = tmp_path / "Llama-2-7b-hf"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "llama-2-7b.json").read_text())
    m = symgpt.load(str(folder))
    assert m.name == "Llama-2-7b-hf" and m.params == 6_738_415_616
    assert symgpt.load(folder / "config.json").name == "config"


def test_odd_file_names_stay_on_one_line(tmp_path):
    p = write(tmp_path, b"[]", "two\nlines\x1b[31m.json")
    with pytest.raises(SymgptError) as e:
        symgpt.load(p)
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value)
    ok = write(tmp_path, (CONFIGS / "gpt2.json").read_bytes(), "a\nb.json")
    assert symgpt.load(ok).name == "a\nb"  # the name itself is kept exactly, as data


# --- fields that change no parameter count, against transformers' parsed config ---------------
#: activations the modeling code fixes with no config field: BloomGelu (the tanh GELU),
#: MptMLP's nn.GELU(approximate="none"), CTRL's point_wise_feed_forward_network nn.ReLU,
#: CpmAntDenseGatedACT's nn.GELU()
_FIXED_ACTIVATION = {"bloom": "gelu_tanh", "mpt": "gelu", "ctrl": "relu", "cpmant": "gelu",
                     "lfm2": "silu", "lfm3": "silu",  # Lfm2MLP, Lfm3MLP: F.silu, no activation field
                     "rwkv": "relu2", "xlstm": "silu"}  # RwkvFeedForward: torch.square(torch.relu(...))


def _transformers_view(cfg):
    from transformers import AutoConfig
    from symgpt.families.fields import ACTIVATIONS

    c = AutoConfig.for_model(**cfg)
    rope = getattr(c, "rope_parameters", None) or {}
    if cfg["model_type"] in _FIXED_ACTIVATION:
        activation = _FIXED_ACTIVATION[cfg["model_type"]]
    else:
        activation = ACTIVATIONS[next(getattr(c, a) for a in ("hidden_activation", "hidden_act", "activation",
                                                              "activation_function", "afn", "mlp_hidden_act")
                                      if getattr(c, a, None))]
    experts = next((getattr(c, a) for a in ("num_local_experts", "num_experts", "n_routed_experts",
                                            "moe_num_experts")  # AriaTextConfig's
                    if getattr(c, a, None)), None)
    rotary = rope.get("partial_rotary_factor", 1.0) if rope else None
    # GPT-J, CodeGen: the first rotary_dim of each head (MiniMaxM3VLTextConfig's rotary_dim is read by
    # no module: its rotary tables span head_dim × partial_rotary_factor)
    if getattr(c, "rotary_dim", None) and cfg["model_type"] != "minimax_m3_vl_text":
        rotary = c.rotary_dim / (c.hidden_size // c.num_attention_heads)
    window = getattr(c, "sliding_window", None) or None  # Qwen2-MoE writes 0 for none
    if "sliding_attention" not in (getattr(c, "layer_types", None) or ["sliding_attention"]):
        window = None  # no layer slides (Mellum's default): the length is never used
    if "local" in (getattr(c, "attention_layers", None) or ()):  # GPT-Neo's local layers
        window = c.window_size
    return {"W": window,
            "T_max": next((getattr(c, a) for a in ("max_position_embeddings", "n_positions", "max_seq_len")
                           if getattr(c, a, None)), None),  # BLOOM has none (ALiBi)
            "rotary": rotary, "activation": activation, "E": experts,
            "k": getattr(c, "num_experts_per_tok", None) or getattr(c, "moe_topk", None)}


def _symgpt_view(m):
    f, s = m.flags, m.sizes
    rotary = None if f.get("positions", "learned") != "rotary" else (f["rotary_pct"] or 100) / 100
    if "positions" not in f and "rotary_pct" in f:  # the hybrids: rotary_pct unset is no RoPE
        rotary = f["rotary_pct"] / 100 if f["rotary_pct"] else None
    if f.get("mla_nope"):  # Kimi Linear: multi-latent attention whose rotary parts are not rotated
        rotary = None
    return {"W": s.get("W") if f.get("window") else None, "T_max": s.get("T_max"), "rotary": rotary,
            "activation": f.get("activation", "gelu_tanh"), "E": s.get("E"), "k": s.get("k")}


CASES = [json.loads(p.read_text()) for p in sorted(CONFIGS.glob("*.json"))] + \
    [{"model_type": t, **({"num_experts_per_tok": 6} if t == "deepseek_v2" else {})} for t in sorted(SMALL)] + \
    [{"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 0},
     {"model_type": "gpt_neox", "rotary_pct": 0.5}, {"model_type": "falcon", "alibi": True}]


@pytest.mark.parametrize("cfg", CASES, ids=[f"{c['model_type']}-{i}" for i, c in enumerate(CASES)])
def test_window_rotary_activation_and_lengths_read_as_transformers_reads_them(cfg):
    m = from_dict(cfg, "x")
    view = _transformers_view(cfg)
    if cfg.get("alibi"):
        assert m.flags["positions"] == "alibi"
        view["rotary"] = None
    if cfg["model_type"] == "gemma":
        view["activation"] = "gelu_tanh"  # transformers reads the legacy "gelu" as tanh-GELU
    if cfg["model_type"] == "doge" and not cfg.get("is_moe"):
        view["E"] = view["k"] = None  # DogeConfig's num_experts is read only with is_moe (DogeCDMoE)
    if m.family.name in ("hybrid", "hybrid1"):
        # the hybrids' attention has no learned position table (max_position_embeddings is read by no
        # module of theirs) and rotates by rope_parameters only where its modeling applies RoPE
        # (Granite 4.0-H: position_embedding_type "rope"; Jamba, Nemotron-H: never)
        view["T_max"] = None
        if cfg["model_type"] in ("jamba", "nemotron_h") or (cfg["model_type"] == "granitemoehybrid"
                                                            and cfg.get("position_embedding_type") != "rope"):
            view["rotary"] = None
    if cfg["model_type"] == "gpt2":
        # the gpt2 family's GELU is one op (its torch oracle's nn.GELU(approximate="tanh")), the
        # function transformers' gelu_new writes as several ops
        view["activation"] = "gelu_tanh"
    assert _symgpt_view(m) == view
