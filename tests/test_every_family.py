"""Every family, everywhere (the graph, LaTeX and queries work for every family).

For one preset of each registered family (the generic ``decoder`` at small sizes), at a small
B and T: the counts, the shape trace, the Graphviz DOT, the LaTeX of ``--what all``, and the
queries (rule, dominance, crossover of the blocks' forward FLOPs as T grows, compare). The
assertions are structural facts a reader can check by hand: breakdowns sum to totals, the KV
cache is 2·L·B·T·h_kv·d_head fp32 numbers (Min(T, W) positions with a window), the logits are
(B, T, V), every op of the graph is drawn, the exact parameter count is typeset, both sides of a
crossover are equal at the point found. One standalone document with every family's parameter
and shape tables and its forward pass step by step is compiled with latexmk, and each count is
read back from the PDF's text.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import sympy

import symgpt
from helpers import pdf_words
from symgpt.cli import main
from symgpt.families import families
from symgpt.query import compare, crossover, dominance, rule
from symgpt.documents.diagrams import diagram, dot_text
from symgpt.documents.latex_doc import fragment, label_key, preamble
from symgpt.render.latex_escape import tex_escape
from symgpt.render.latex_numbers import tex_int
from symgpt.core.symbols import T

B_, T_ = 2, 8
ZOO = Path(__file__).parent / "configs" / "zoo"
#: family -> (model, sizes bound on load); presets are rows of symgpt/presets*.py
CASES = {
    "gpt2": ("gpt2-small", {}),
    "llama": ("llama-7b", {}),
    "mistral": ("mistral-7b", {}),
    "mixtral": ("mixtral-8x7b", {}),
    "qwen2": ("qwen2-0.5b", {}),
    "gemma": ("gemma-2b", {}),
    "phi3": ("phi-3-mini", {}),
    "falcon": ("falcon-7b", {}),
    "gpt_neox": ("pythia-160m", {}),
    "opt": ("opt-125m", {}),
    "decoder": ("decoder", {"L": 2, "d": 64, "h": 4, "V": 100, "d_ff": 160}),
    # the decoders of Qwen3, Qwen-MoE, Gemma 2/3, Phi-2, StarCoder2 and OLMo 2
    "qwen3": ("qwen3-8b", {}),
    "qwen2_moe": ("qwen1.5-moe-a2.7b", {}),
    "qwen3_moe": ("qwen3-30b-a3b", {}),
    "gemma2": ("gemma-2-9b", {}),
    "gemma3_text": ("gemma-3-1b", {}),
    "phi": ("phi-2", {}),
    "starcoder2": ("starcoder2-3b", {}),
    "olmo2": ("olmo2-7b", {}),
    "deepseek_v2": ("deepseek-v2-lite", {}),
    "deepseek_v3": ("deepseek-v3", {}),
    # existing blocks under other names, or a flag away: a preset, else transformers' default config
    "smollm3": ("smollm3-3b", {}),
    "granite": ("granite-3.3-8b", {}),
    **{t: (str(ZOO / f"{t}.json"), {}) for t in (
        "exaone", "internlm3", "iquestcoder", "cwm", "ernie4_5", "helium", "ministral3", "vaultgemma", "glm",
        "seed_oss", "olmo3", "hyperclovax", "granitemoe", "granitemoeshared", "sarvam_mla")},
    # attention variants
    "gpt_oss": ("gpt-oss-20b", {}),
    # mixture-of-experts decoders and multi-latent attention (the moe group)
    "olmoe": ("olmoe", {"L": 2, "d": 64, "h": 4, "V": 100, "d_ff": 32, "E": 4, "k": 2}),
    "minimax_m2": ("minimax_m2", {"L": 2, "d": 64, "h": 4, "h_kv": 2, "d_head": 16, "V": 100, "d_ff": 32,
                                  "E": 4, "k": 2}),
    "mellum": ("mellum", {"L": 2, "d": 64, "h": 4, "h_kv": 2, "d_head": 16, "V": 100, "d_ff": 32, "E": 4, "k": 2}),
    "glm4_moe": ("glm-4.5-air", {}),
    "kolibri1": ("kolibri1", {"L": 5, "d": 64, "h": 4, "h_kv": 2, "d_head": 16, "V": 100, "d_ff": 32, "E": 4,
                              "k": 2, "W": 64}),
    "phimoe": ("phimoe", {"L": 2, "d": 64, "h": 4, "h_kv": 2, "V": 100, "d_ff": 32, "E": 4, "k": 2}),
    "minicpm3": ("minicpm3", {"L": 2, "d": 64, "h": 4, "V": 100, "d_ff": 32}),
    "youtu": ("youtu", {"L": 2, "d": 64, "h": 4, "V": 100, "d_ff": 32}),
    # DeepSeek Sparse Attention: transformers' default configurations
    **{t: (str(ZOO / f"{t}.json"), {}) for t in ("deepseek_v32", "glm_moe_dsa", "axk2")},
    # the decoders with designs of their own
    "gpt_neox_japanese": (str(ZOO / "gpt_neox_japanese.json"), {}),
    # mixture-of-experts decoders, second group
    **{t: (t, {"L": L, "d": 64, "h": 4, "h_kv": 2, "V": 100, "d_ff": 32, "E": 4, "k": 2, **extra}) for t, L, extra in (
        ("aria_text", 2, {}), ("cohere2_moe", 4, {"W": 16}), ("exaone_moe", 4, {"W": 16}), ("hy_v3", 2, {}),
        ("ernie4_5_moe", 2, {}), ("minimax_m3_vl_text", 2, {}))},
    # xIELU, BitNet's sub-norms, MLA with a post-MoE norm, Llama 4
    **{t: (str(ZOO / f"{t}.json"), {}) for t in ("apertus", "bitnet", "axk1", "llama4_text")},
    # differential attention, dynamic masks, mixtures of attention heads, prompt positions
    "diffllama": (str(ZOO / "diffllama.json"), {}),
    "doge": (str(ZOO / "doge.json"), {}),
    "jetmoe": (str(ZOO / "jetmoe.json"), {}),
    "cpmant": (str(ZOO / "cpmant.json"), {}),
    # attention output gates and sinks
    **{t: (str(ZOO / f"{t}.json"), {}) for t in (
        "afmoe", "laguna", "beam", "flint", "mimo_v2_flash", "granite_swa", "granitemoe_swa")},
    # ModernBERT's decoder: a bare first layer, full layers among sliding ones, a prediction head
    "modernbert_decoder": (str(ZOO / "modernbert-decoder.json"), {}),
    # Gemma 4 with one head width (its wider full-attention heads: tests/test_gemma4.py)
    "gemma4": ("gemma4", {"L": 6, "d": 64, "h": 4, "h_kv": 2, "d_head": 16, "V": 100, "d_ff": 160, "W": 16}),
}
#: the families whose attention is multi-latent (their cache: the latent and the shared rotary key)
MLA_FAMILIES = {"deepseek_v2", "deepseek_v3", "minicpm3", "youtu"}  # (the kv_lora_rank check below covers any)
# the dense decoders read from config.json: each family at small sizes (no presets)
_SMALL = {"L": 2, "d": 64, "h": 4, "V": 100, "d_ff": 160}
CASES.update({
    "bloom": ("bloom", _SMALL), "mpt": ("mpt", _SMALL), "gptj": ("gptj", _SMALL), "codegen": ("codegen", _SMALL),
    "gpt_neo": ("gpt_neo", {**_SMALL, "T_max": 64, "W": 16}),
    "gpt_bigcode": ("gpt_bigcode", {**_SMALL, "T_max": 64, "h_kv": 1}),
    "openai_gpt": ("openai_gpt", {**_SMALL, "T_max": 64}),
    "cohere": ("cohere", _SMALL), "cohere2": ("cohere2", {**_SMALL, "L": 4, "W": 16}),
    "stablelm": ("stablelm", _SMALL), "glm4": ("glm4", {**_SMALL, "h_kv": 2}), "olmo": ("olmo", _SMALL),
    "exaone4": ("exaone4", {**_SMALL, "L": 4, "W": 16}), "persimmon": ("persimmon", _SMALL),
    "arcee": ("arcee", _SMALL), "jais2": ("jais2", _SMALL), "nanochat": ("nanochat", _SMALL),
    "xglm": ("xglm", _SMALL), "ctrl": ("ctrl", _SMALL), "biogpt": ("biogpt", {**_SMALL, "T_max": 64}),
})
# Step 3.5's and Unlimited-OCR's decoders (read as text_configs only: tests/test_vlm_held_moe.py)
CASES["step3p5"] = ("step3p5", {"L": 4, "d": 64, "h": 4, "h_kv": 2, "d_head": 16, "V": 100, "d_ff": 32, "E": 4,
                                "k": 2})
CASES["unlimited_ocr_text"] = ("unlimited_ocr_text", {"L": 2, "d": 64, "h": 4, "h_kv": 4, "d_head": 16, "V": 100,
                                                      "d_ff": 32, "E": 4, "k": 2})
FAMILIES = sorted(CASES)
WINDOWED = {"mistral", "phi3", "gemma2", "gemma3_text", "starcoder2", "cwm", "vaultgemma", "olmo3", "gpt_oss",
            "gpt_neo", "cohere2", "exaone4", "kolibri1", "cohere2_moe", "exaone_moe",
            "afmoe", "beam", "flint", "mimo_v2_flash", "granite_swa", "granitemoe_swa", "gemma4",
            "modernbert_decoder"}


def test_every_registered_family_is_covered():
    # symgpt's own families (a user's, such as examples/my_arch.py loaded by another test, aside)
    builtin = {name for name, fam in families().items()
               if getattr(fam.build, "func", fam.build).__module__.startswith("symgpt.")}
    # the encoders, encoder-decoders, an encoder-decoder's decoder alone and ViT:
    # tests/test_encdec_everywhere.py
    assert set(CASES) == builtin - {"bert", "roberta", "distilbert", "t5", "bart", "transformer", "vit",
                                    "camembert", "xlm-roberta", "data2vec-text", "ernie",
                                    "seq2seq_decoder", "electra", "megatron_bert", "xlm_roberta_xl",
                                    "roberta_prelayernorm", "bert_generation",
                                    # state-space families (a recurrent state, no KV cache:
                                    # tests/test_recurrent_inference.py): tests/test_ssm.py
                                    "mamba", "mamba2",
                                    "roformer", "rembert", "roc_bert", "xmod", "big_bird", "xlm",
                                    # hybrids of those with attention: tests/test_hybrid.py
                                    "hybrid", "hybrid1",
                                    # vision--language models: tests/test_vlm.py
                                    "gemma3", "llava",
                                    # speech models: tests/test_whisper.py, tests/test_audio_lm.py
                                    "whisper", "qwen2_audio",
                                    # speech models beyond Whisper: tests/test_voxtral.py, tests/test_pop2piano.py,
                                    # tests/test_speech_to_text.py, tests/test_moonshine.py
                                    "voxtral", "pop2piano", "speech_to_text", "moonshine",
                                    # image and speech encoder--decoders: tests/test_pix2struct.py,
                                    # tests/test_vision_encoder_decoder.py, tests/test_blip2.py
                                    "pix2struct", "vision-encoder-decoder", "blip-2",
                                    "instructblip", "instructblipvideo", "blip",  # tests/test_blip.py
                                    "kosmos-2",  # tests/test_kosmos2.py
                                    # speech models with a held audio tower: tests/test_qwen3_asr.py,
                                    # tests/test_granite_speech.py
                                    "qwen3_asr", "granite_speech", "granite_speech_plus",
                                    # Llama 3.2 Vision: tests/test_mllama.py
                                    "mllama_text", "mllama",
                                    # Qwen2.5-VL: tests/test_qwen_vl.py
                                    "qwen2_5_vl",
                                    # PaliGemma, LLaVA-NeXT, -OneVision, ViP-LLaVA, Qwen2-VL: tests/test_vlm_readers.py
                                    "paligemma", "llava_next", "llava_onevision", "vipllava", "qwen2_vl",
                                    # a decoder of another family with a held vision tower: tests/test_vlm_towers_text.py
                                    "qwen3_vl", "qwen3_vl_moe", "qwen3_5_vl", "qwen3_5_moe_vl", "glm4v",
                                    "glm4v_moe", "glm_ocr", "exaone4_5", "qwen2_5_omni_thinker",
                                    "qwen3_omni_moe_thinker", "video_llama_3",
                                    "paddleocr_vl", "kimi_k25",
                                    "cosmos3_edge",  # the same: tests/test_vlm_towers_text2.py
                                    # Llama 4 with its vision encoder, Fuyu, MiniCPM-V, HyperCLOVA X Vision:
                                    # tests/test_llama4_vision.py, tests/test_fuyu.py, tests/test_minicpmv.py,
                                    # tests/test_hyperclovax_vision.py
                                    "llama4", "fuyu", "minicpmv", "hyperclovax_vision",
                                    # Gated DeltaNet hybrids (the same): tests/test_gated_delta.py
                                    "qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "lara_mini",
                                    # linear-attention hybrids: tests/test_lightning.py, tests/test_kda.py
                                    "minimax", "kimi_linear", "bailing_hybrid",
                                    # short-convolution layers among attention layers (their state is
                                    # not a KV cache): tests/test_kinds.py
                                    "lfm2", "lfm3",
                                    # recurrent layers (their state: tests/test_recurrent_state.py): tests/test_recurrent.py
                                    "rwkv", "recurrent_gemma", "xlstm",
                                    # shared transformer blocks among Mamba layers: tests/test_zamba.py
                                    "zamba", "zamba2",
                                    # vision--language models with Pixtral, Idefics3, InternViT and other
                                    # towers (images priced or refused): tests/test_vlm_towers.py
                                    "idefics3", "smolvlm", "idefics2", "aria", "mistral3", "lighton_ocr",
                                    "video_llava", "cohere2_vision", "internvl", "qianfan_ocr", "got_ocr2",
                                    "deepseek_vl", "deepseek_vl_hybrid", "lfm2_vl",
                                    # vision--language models, second wave (parameters: tests/test_vlm_zoo.py)
                                    "lfm3_vl", "granite_docling", "git", "florence2", "udop",
                                    # speech encoder--decoders with a held speech encoder: tests/test_speecht5.py,
                                    # tests/test_canary.py, tests/test_speech_encoder_decoder.py,
                                    # tests/test_seamless_m4t.py
                                    "speecht5", "canary", "cohere_asr", "speech-encoder-decoder",
                                    "seamless_m4t", "seamless_m4t_v2",
                                    # Voxtral Realtime, its audio tower held: tests/test_voxtral_realtime.py
                                    "voxtral_realtime",
                                    # VibeVoice, its tokenizers held: tests/test_vibevoice.py
                                    "vibevoice_asr", "vibevoice",
                                    # Kyutai speech-to-text, its codec held: tests/test_kyutai.py
                                    "kyutai_speech_to_text",
                                    # a decoder beside held vision, protein or encoder modules (some in
                                    # parameters only): tests/test_vlm_held.py
                                    "molmo2", "idefics", "evolla", "kosmos-2.5", "pp_formulanet", "t5gemma2",
                                    # a decoder beside a held vision or audio tower: tests/test_held_towers.py
                                    "ovis2", "omniasr", "fun_asr_nano", "nemotron_h_omni", "janus",
                                    # more decoders beside a held vision tower: tests/test_vlm_held_moe.py
                                    "minimax_m3_vl", "step3p7", "ernie4_5_vl_moe", "unlimited_ocr"}


_MODELS: dict[str, object] = {}


def model(family):
    if family not in _MODELS:
        name, sizes = CASES[family]
        m = symgpt.load(name, B=B_, T=T_, **sizes)
        assert m.family.name == family
        _MODELS[family] = m
    return _MODELS[family]


def _sums(q):
    """(sum of the breakdown's values, the total's value): equal for every quantity."""
    return sum(q.values().values()), q.value


@pytest.mark.parametrize("family", FAMILIES)
def test_counts(family):
    m = model(family)
    for name in ("params", "flops.forward", "flops.train", "memory.total", "memory.kv_cache"):
        q = m.quantity(name)
        total, value = _sums(q)
        assert value is not None and value.is_Integer and value > 0, (name, value)
        assert total == value, name
    fwd, bwd, train = (m.quantity(n).value for n in ("flops.forward", "flops.backward", "flops.train"))
    assert train == fwd + bwd
    # default convention: matmuls only, each needs both input gradients -> backward = 2 x forward,
    # less a sparse-attention indexer's, which runs without gradient (torch.no_grad)
    indexer = sum(v for path, v in m.quantity("flops.forward").values().items() if "/indexer/" in path)
    assert (indexer > 0) == bool(m.flags.get("index_heads"))
    assert bwd == 2 * (fwd - indexer)
    s = m.sizes
    h_kv, d_head = s.get("h_kv", s["h"]), s.get("d_head", sympy.Rational(s["d"], s["h"]))
    keys = min(T_, s["W"] - 1) if "W" in s else T_            # a window keeps W - 1 (DynamicSlidingWindowLayer)
    keys += m.flags.get("prompt_length") or 0                # CPM-Ant caches its prompt positions too
    per_layer = 2 * keys * h_kv * d_head                    # K and V of every key/value head
    if "kv_lora_rank" in m.flags:                           # MLA: the latent and the shared rotary key
        per_layer = keys * (m.flags["kv_lora_rank"] + m.flags["qk_rope_dim"])
    if m.flags.get("index_heads"):                          # and a sparse-attention indexer's key
        per_layer += keys * m.flags["index_head_dim"]
    if family == "mimo_v2_flash":  # values of d_v; the sliding layers have twice the K/V heads
        full = m.flags["full_layers"]
        assert m.quantity("memory.kv_cache").value == \
            B_ * keys * h_kv * (d_head + m.flags["d_v"]) * (full + 2 * (s["L"] - full)) * 4
        return
    assert m.quantity("memory.kv_cache").value == s["L"] * B_ * per_layer * 4  # fp32


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes(family, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # one row a tensor (a narrow terminal wraps long cells)
    m = model(family)
    shapes = m.shapes()
    assert len(shapes) == len(m.arch.order)
    assert shapes[0].name == "input_ids" and shapes[0].shape == (B_, T_)
    by_name = {t.name: t.shape for t in shapes}
    assert by_name[m.arch.output] == (B_, T_, m.sizes["V"])
    assert all(x.is_Integer and x > 0 for t in shapes for x in t.shape)
    assert main(["shapes", CASES[family][0], "--set", f"B={B_}", "--set", f"T={T_}",
                 *(a for k, v in CASES[family][1].items() for a in ("--set", f"{k}={v}"))]) == 0
    out = capsys.readouterr().out
    for t in shapes:
        marks = ", ".join("×" + str(g.repeat) + ("" if g.active == g.repeat else f" ({g.active} active)")
                          for g in reversed(m.arch.group_chain(t.group)))
        assert re.search(rf"^{re.escape(t.name + (' ' + marks if marks else ''))}\s", out, re.M), t.name


def test_expert_shapes_show_both_groups(capsys):
    assert main(["shapes", "mixtral-8x7b", "--set", "B=1", "--set", "T=3"]) == 0
    assert re.search(r"^blocks/ffn/experts/up ×L, ×E \(k active\)\s+U\s+\(B, T, d_ff\)\s+\(1, 3, 14336\)",
                     capsys.readouterr().out, re.M)


@pytest.mark.parametrize("family", FAMILIES)
def test_dot(family):
    m = model(family)
    dot = dot_text(m)
    assert dot.startswith("digraph symgpt {") and dot.rstrip().endswith("}")
    for n in m.arch.order:
        assert f'"{n}" [' in dot, n
    for g in m.arch.groups:
        assert f'subgraph "cluster_{g}"' in dot, g
    assert f"total {int(m.params.value):,}" in dot
    assert diagram(m).dot == dot


@pytest.mark.parametrize("family", FAMILIES)
def test_latex_all(family):
    m = model(family)
    tex = fragment(m, "all")
    assert tex_int(m.params.value) in tex
    assert tex_int(m.params.value) == f"{int(m.params.value):,}".replace(",", "{,}")
    key = label_key(m.name)
    for section in ("shapes", "blocks", "breakdown"):
        assert f"tab:symgpt-{key}-{section}" in tex, section
    assert tex.count(r"\begin{") == tex.count(r"\end{")


@pytest.mark.parametrize("family", FAMILIES)
def test_queries(family):
    m = model(family)
    r = rule(m.params, "d")
    assert r.rule != 0 and -1 < r.relative_error <= 0  # leading terms of a sum of positive terms
    dom = dominance(m.params, "d")
    assert sympy.simplify(sum(p.limit for p in dom.parts)) == 1
    assert dom.terms[0].order >= 1
    c = crossover(m.quantity("flops.forward"), "T", part="blocks")
    assert c.value is not None and c.value > 0
    # the sides meet there (cancel: the solution may be a ratio of polynomials, as with a sparse-attention
    # indexer's H·T² scores beside the attention's h·T²)
    assert sympy.cancel((c.fast - c.slow).xreplace({T: c.solution})) == 0
    assert sympy.expand(c.fast / c.slow).free_symbols >= {T}
    if family in WINDOWED:
        assert "T <= W" in c.notes[0] and "Min(T, W) = T" in c.notes[0]
        assert c.value > m.sizes["W"] and "never reached" in c.notes[1]
    else:
        assert c.notes == ()
    same = compare(m.params, sympy.sstr(m.params.expr).replace("**", "^"))
    assert same.equal
    cmp = compare(m.params, r.rule)
    assert cmp.difference_value == r.rule_value - m.params.value
    assert cmp.equal == (r.relative_error == 0)  # gemma: d_head, d_ff are free, every term is linear in d


def test_crossover_cli_says_the_window_regime(capsys):
    assert main(["crossover", "mistral-7b", "flops.forward", "--as", "T", "--part", "blocks"]) == 0
    out = capsys.readouterr().out
    assert "at T = d + d·h_kv/h + 3·d_ff/2\n   = 26,624" in out
    assert "note: solved in the regime T <= W, where Min(T, W) = T" in out
    assert "note: T = 26624 lies beyond W = 4096" in out


def test_one_document_with_every_family_compiles(tmp_path):
    """Every family's parameter and shape tables and its forward pass step by step, in one
    standalone article: latexmk, pdftotext."""
    assert shutil.which("latexmk") and shutil.which("pdftotext"), "TeX and poppler are required"
    body = []
    for family in FAMILIES:
        m = model(family)
        body += [f"\\section*{{{tex_escape(family)}}}", fragment(m, ["params", "shapes", "steps"]), "\\clearpage"]
    src = ("\\documentclass{article}\n" + preamble() + "\\begin{document}\n" + "\n".join(body)
           + "\\end{document}\n")
    tex = tmp_path / "families.tex"
    tex.write_text(src, encoding="utf-8")
    flat = pdf_words(tex)
    for family in FAMILIES:
        assert f"{int(model(family).params.value):,}" in flat, family
    assert flat.count("Step 1: Token Embedding Lookup.") == len(FAMILIES)
    assert flat.count("Logit Projection.") == len(FAMILIES)


def test_latex_shapes_name_the_expert_group():
    tex = fragment(model("mixtral"), "shapes")
    assert (r"\emph{expert, repeated $E = 8$ times, $k = 2$ active per token, in each transformer block}"
            in tex)
