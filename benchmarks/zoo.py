"""symgpt's coverage of every causal-LM type of a transformers release: writes benchmarks/ZOO.md.

Reads the oracle table ``tests/oracles/zoo/transformers-<version>.json`` (built once, by hand,
with ``tests/oracles/zoo_build.py``: every type's default configuration instantiated on the meta
device, its parameter count and FlopCounterMode forward FLOPs) and loads each stored
``tests/configs/zoo/<model_type>.json`` through symgpt (``tests/zoo_coverage.py``, the same
classification ``tests/test_zoo.py`` asserts on). Neither this script nor the test builds a
torch model or imports transformers. ::

    python3 benchmarks/zoo.py            # rewrites benchmarks/ZOO.md
    python3 benchmarks/zoo.py --check    # exit 1 if ZOO.md is not what it would write

``GROUPS`` sorts the types symgpt does not count exactly by what they need (read from the
parameter names and shapes of each class built from its default configuration, and from the
configuration fields); a type listed there that becomes exact shows as exact in the table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

#: (group, what it needs, types) -- every type that is not exact is in exactly one group
GROUPS: list[tuple[str, str, list[str]]] = [
    ("Dense decoders: a reader plus at most a small flag",
     "gpt_bigcode: GPT-2 with multi-query fused c_attn; gpt_neo: learned positions, local "
     "attention every other layer, no Q/K/V bias; gptj, codegen: parallel block, one LayerNorm, "
     "partial rotary, LM-head bias; openai-gpt: post-LN, no final norm; biogpt: OPT-like with a "
     "scaled embedding; stablelm: LayerNorm with bias, partial rotary; cohere, cohere2: parallel "
     "block with one bias-free LayerNorm, tied (cohere2: 3 sliding : 1 full); exaone4: "
     "OLMo-2-style post norms, head QK norm, sliding layers; glm4: GLM with branch norms",
     ["gpt_bigcode", "gpt_neo", "gptj", "codegen", "openai-gpt", "biogpt", "stablelm", "cohere",
      "cohere2", "exaone4", "glm4"]),
    ("Mixture-of-experts decoders: a reader plus the mixture's layout",
     "existing moe / shared_expert / dense_layers flags, plus per case: LayerNorm with bias "
     "(phimoe), full QK norm (olmoe), OLMo-2 norms (flex_olmo), a parallel block (cohere2_moe), "
     "an expert-score correction bias parameter (ernie4_5_moe: moe_statics; glm4_moe, laguna), "
     "interleaved MoE layers and a shared expert (llama4_text, also NoPE and chunked attention), "
     "a fused shared gate/up (minimax_m3_vl_text), GLM-4.5 norms (kolibri1)",
     ["olmoe", "phimoe", "mellum", "minimax_m2", "flex_olmo", "aria_text", "solar_open",
      "cohere2_moe", "exaone_moe", "hy_v3", "kolibri1", "sarvam_moe", "glm4_moe", "ernie4_5_moe",
      "llama4_text", "minimax_m3_vl_text"]),
    ("Multi-head latent attention decoders (DeepSeek's MLA)",
     "the deepseek family's MLA without experts (minicpm3, youtu) or with a post-MLP norm (axk1), "
     "or MLA with GLM-4.5's mixture (glm4_moe_lite)",
     ["minicpm3", "youtu", "glm4_moe_lite", "axk1"]),
    ("ALiBi decoders",
     "a reader for the alibi positions flag; bloom also a LayerNorm on the word embeddings; mpt "
     "bias-free LayerNorm and linears",
     ["bloom", "mpt"]),
    ("Sinusoidal positions",
     "a positions choice with no parameters and no rotation (xglm: pre-LN, scaled embedding; ctrl: "
     "LM-head bias)",
     ["xglm", "ctrl"]),
    ("The relu² activation (non-gated MLP)",
     "activation relu2 (squared ReLU): arcee, jais2 (count equals gpt_neox's reading), persimmon "
     "(also per-head QK LayerNorm with bias, fused Q/K/V with bias), nanochat (also "
     "parameter-free RMSNorm and QK norm), bitnet (also sub-norms before o_proj and down_proj)",
     ["arcee", "jais2", "persimmon", "nanochat", "bitnet"]),
    ("Other activations and norms",
     "apertus, apertus1p5_text: xIELU activation with two learned scalars per layer, non-gated "
     "MLP, head QK norm; olmo: LayerNorm without parameters",
     ["apertus", "apertus1p5_text", "olmo"]),
    ("Attention sinks",
     "a learned per-head sink logit (sinks: h parameters per layer) in the softmax: gpt_oss "
     "(also MoE with biases, alternating windows), granite_swa, granitemoe_swa, mimo_v2_flash "
     "(MoE, dense first layer, SWA), flint (MoE, shared expert, QK norm)",
     ["gpt_oss", "granite_swa", "granitemoe_swa", "mimo_v2_flash", "flint"]),
    ("Gated attention output",
     "a sigmoid gate projection on the attention output (gate_proj / g_proj: d x h·d_head), with "
     "MoE and sandwich norms: afmoe, beam, laguna",
     ["afmoe", "beam", "laguna"]),
    ("DeepSeek sparse attention (lightning indexer)",
     "MLA plus the indexer's projections (wq_b, wk, k_norm, weights_proj): deepseek_v32, "
     "glm_moe_dsa, axk2 (also a gated query and an MLP in its norms), dots3_note_text (also an "
     "output gate)",
     ["deepseek_v32", "glm_moe_dsa", "axk2", "dots3_note_text"]),
    ("Hyper-connections and compressed attention",
     "hyper-connection mixing (hc_fn, hc_base, hc_scale) around each branch, a KV compressor and "
     "sinks",
     ["deepseek_v4", "hy_v4"]),
    ("Gemma 3n / Gemma 4 text variants",
     "per-layer input embeddings and projections (gemma4_text, gemma3n_text), AltUp and LAuReL "
     "(gemma3n_text), KV sharing and global-layer head sizes (gemma4_unified_text), the "
     "assistant's pre/post projections and shared KV (gemma4_unified_assistant)",
     ["gemma3n_text", "gemma4_text", "gemma4_unified_text", "gemma4_unified_assistant"]),
    ("Attention or block designs of their own",
     "diffllama: differential attention (lambda vectors); doge: dynamic-mask attention and "
     "residual scales; dory: normalised-transformer scalings; jetmoe: mixture of attention heads "
     "and MoE; zaya: convolutional QK, residual scaling, MLP router; longcat_flash: two attentions "
     "and two MLPs per layer, zero-computation experts; hrm_text: hierarchical recurrent "
     "modules; cpmant: relative position bias and segment embeddings; gpt_neox_japanese: a "
     "separate attention output bias; modernbert-decoder: ModernBERT blocks with a prediction "
     "head; inkling*: message gates, short convolutions, relative position bias",
     ["diffllama", "doge", "dory", "jetmoe", "zaya", "longcat_flash", "hrm_text", "cpmant",
      "gpt_neox_japanese", "modernbert-decoder", "inkling_text", "inkling2_text",
      "inkling2_loop_text"]),
    ("Encoder ForCausalLM heads (BERT-style encoders run as decoders)",
     "the bert family's variants: pre-LN (megatron-bert, xlm-roberta-xl: counts equal BERT's / "
     "RoBERTa's reading, layout differs; roberta-prelayernorm), no token types, no pooler "
     "(bert-generation), block-sparse attention and a pooler (big_bird), an embedding projection "
     "(electra), decoupled embedding width (rembert), extra embeddings (roc_bert), rotary with a "
     "sinusoidal table parameter (roformer), language adapters (xmod); xlm: XLM; xlnet: "
     "two-stream relative attention",
     ["megatron-bert", "xlm-roberta-xl", "roberta-prelayernorm", "bert-generation", "big_bird",
      "electra", "rembert", "roc_bert", "roformer", "xmod", "xlm", "xlnet"]),
    ("The decoder of an encoder-decoder, alone (cross-attention, no encoder)",
     "the bart family's decoder stack as a causal LM: self- and cross-attention per layer, "
     "learned or sinusoidal positions (marian, pegasus, whisper), embedding LayerNorm or final "
     "LayerNorm per model; prophetnet also n-gram streams and relative position embeddings",
     ["bart", "bigbird_pegasus", "blenderbot", "blenderbot-small", "marian", "mbart", "mvp",
      "pegasus", "plbart", "trocr", "whisper", "prophetnet"]),
    ("State-space, recurrent, linear-attention and hybrid models",
     "a mixer other than softmax attention: Mamba (mamba, falcon_mamba), Mamba-2 (mamba2), RWKV, "
     "xLSTM, RG-LRU (recurrent_gemma), Mamba-2 hybrids (bamba, falcon_h1, granitemoehybrid, "
     "nemotron_h, zamba, zamba2, jamba with Mamba-1 and MoE), short-convolution hybrids (lfm2, "
     "lfm3), gated DeltaNet hybrids (qwen3_next, qwen3_5_text, qwen3_5_moe_text, olmo_hybrid, "
     "lara_mini), KDA (kimi_linear), lightning attention (minimax, bailing_hybrid)",
     ["mamba", "falcon_mamba", "mamba2", "rwkv", "xlstm", "recurrent_gemma", "bamba", "falcon_h1",
      "granitemoehybrid", "nemotron_h", "zamba", "zamba2", "jamba", "lfm2", "lfm3", "qwen3_next",
      "qwen3_5_text", "qwen3_5_moe_text", "olmo_hybrid", "lara_mini", "kimi_linear", "minimax",
      "bailing_hybrid"]),
    ("Multimodal towers and byte-level models",
     "a vision or audio tower, projector or cross-attention layers next to the text decoder: "
     "gemma3 (SigLIP tower), gemma4, gemma4_unified (the class's text part), git, got_ocr2, fuyu "
     "(a patch projection), mllama (cross-attention layers), phi4_multimodal, "
     "moss_transcribe_diarize (audio tower), moshi (audio LM); blt: local encoder/decoder and a "
     "patcher around the global transformer",
     ["gemma3", "gemma4", "gemma4_unified", "git", "got_ocr2", "fuyu", "mllama", "phi4_multimodal",
      "moss_transcribe_diarize", "moshi", "blt"]),
]


#: the existing reader whose reading of the type's config gives transformers' count and B=1, T=8
#: forward FLOPs (the config's model_type replaced; measured, see the module docstring)
ALIASES = {
    "exaone": "llama", "internlm3": "llama", "iquestcoder": "llama", "cwm": "llama", "ernie4_5": "llama",
    "granite": "llama", "helium": "llama", "ministral3": "llama", "smollm3": "llama",
    "vaultgemma": "gemma", "glm": "qwen2", "seed_oss": "qwen2", "olmo3": "olmo2", "hyperclovax": "olmo2",
    "granitemoe": "mixtral", "granitemoeshared": "mixtral", "sarvam_mla": "deepseek_v3",
    "camembert": "roberta", "data2vec-text": "roberta", "xlm-roberta": "roberta", "ernie": "bert",
    "jais2": "gpt_neox", "megatron-bert": "bert", "xlm-roberta-xl": "roberta",
}


def _fmt(n):
    return f"{n:,}" if n is not None else "–"


def render(version: str) -> str:
    from zoo_coverage import classify, counts, flops_counts, read_table
    from test_zoo import EXACT_FLOOR, FLOPS_EXACT_FLOOR, KNOWN_WRONG

    table = read_table(version)
    rows = classify(table, frozenset(KNOWN_WRONG))
    by = {r.model_type: r for r in rows}
    grouped = [t for _, _, ts in GROUPS for t in ts]
    dup = sorted({t for t in grouped if grouped.count(t) > 1})
    if dup:
        raise SystemExit(f"types in more than one group: {dup}")
    unknown = sorted(set(grouped) - set(by))
    if unknown:
        raise SystemExit(f"grouped types not in the table: {unknown}")
    loose = sorted(r.model_type for r in rows if r.status not in ("exact", "unbuilt") and r.model_type not in grouped)
    if loose:
        raise SystemExit(f"types neither exact nor grouped (add them to GROUPS): {loose}")

    c, f = counts(rows), flops_counts(rows)
    fw = table["forward"]
    out = [f"# Coverage of transformers' causal-LM types\n",
           f"Generated by `python3 benchmarks/zoo.py` from `tests/oracles/zoo/transformers-{version}.json`; "
           "do not edit by hand.\n",
           "Every `model_type` of transformers' `MODEL_FOR_CAUSAL_LM_MAPPING_NAMES` is built from its "
           "default configuration (`AutoConfig.for_model`) as the class that mapping names, on the meta "
           "device, with eager attention; `sum(p.numel() for p in model.parameters())` and FlopCounterMode's "
           f"total for one forward of B={fw['B']}, T={fw['T']} token ids (`use_cache=False`) are the oracle. "
           "The table is built once, by hand (`nice -n 19 python3 tests/oracles/zoo_build.py`, a few "
           "minutes), and committed with the configurations (`tests/configs/zoo/`); CI never rebuilds "
           "the zoo: `tests/test_zoo.py` reads the table, asserts no wrong number and no crash, and that "
           f"the exact count stays at or above its floor ({EXACT_FLOOR} params, {FLOPS_EXACT_FLOOR} forward FLOPs).\n",
           f"## transformers {version} (torch {table['torch']})\n",
           "| status | types | meaning |", "|---|---:|---|",
           f"| exact | {c['exact']} | symgpt's parameter count equals transformers' |",
           f"| refused | {c['refused']} | symgpt refuses in one line (`SymgptError`) |",
           f"| known-wrong | {c['known-wrong']} | a wrong number being fixed (listed in `KNOWN_WRONG`) |",
           f"| wrong | {c['wrong']} | a number that differs |",
           f"| crash | {c['crash']} | an exception other than `SymgptError` |",
           f"| unbuilt | {c['unbuilt']} | transformers cannot build its own default configuration (no oracle) |",
           f"| total | {len(rows)} | |", "",
           "Forward FLOPs of the exact types: "
           + ", ".join(f"{k} {v}" for k, v in sorted(f.items())) + ".\n",
           "### Exact\n",
           "| type | class | params | forward FLOPs (B=1, T=8) | FLOPs |", "|---|---|---:|---:|---|"]
    for r in rows:
        if r.status == "exact":
            out.append(f"| {r.model_type} | {r.cls} | {_fmt(r.params)} | {_fmt(r.flops)} | {r.flops_status} |")
    out += ["", "### Not counted exactly, by what they need\n",
            "Each group: what the types need, then each type with its default-configuration parameter "
            "count (transformers') and symgpt's answer today.\n"]
    for title, needs, types in GROUPS:
        n = sum(by[t].params or 0 for t in types)
        out += [f"#### {title} ({len(types)})\n", f"Needs: {needs}.\n",
                "| type | class | params | status | reason |", "|---|---|---:|---|---|"]
        for t in types:
            r = by[t]
            name = f"{t} (as {ALIASES[t]})" if t in ALIASES else t
            out.append(f"| {name} | {r.cls} | {_fmt(r.params)} | {r.status} | {(r.reason or '').replace('|', '/')} |")
        out.append("")
    out += ["### Unbuilt (transformers cannot build its own default configuration)\n",
            "| type | class | reason |", "|---|---|---|"]
    for r in rows:
        if r.status == "unbuilt":
            out.append(f"| {r.model_type} | {r.cls} | {r.reason.replace('|', '/')[:160]} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    from zoo_coverage import VERSION

    return write_page(render, "ZOO.md", VERSION, __doc__, argv)


def write_page(render_page, name: str, version: str, doc: str, argv=None) -> int:
    """The command line of a coverage page (this one, benchmarks/vlm_zoo.py): write
    benchmarks/*name* from *render_page(version)*, or with --check exit 1 where it differs."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--version", default=version, help=f"transformers release of the table (default {version})")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {name} differs from what would be written")
    args = ap.parse_args(argv)
    text = render_page(args.version)
    path = ROOT / "benchmarks" / name
    if args.check:
        return 0 if path.exists() and path.read_text() == text else 1
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
