"""Presets of the decoder families (LLaMA, Mistral, Mixtral, Qwen2, Gemma, Phi-3, Falcon,
GPT-NeoX/Pythia, OPT): data rows, each with its source. Every row equals the model that
``symgpt.load("<the checkpoint's config.json>")`` reads (tests/configs/ holds those files)."""

from __future__ import annotations

from .preset import Preset

_HF = "its config.json on the Hugging Face Hub"

ROWS: tuple[Preset, ...] = (
    Preset("llama-7b", "llama",
           {"L": 32, "h": 32, "d": 4096, "d_ff": 11008, "V": 32000, "T_max": 4096},
           source="Touvron et al. 2023 (LLaMA), Table 2; meta-llama/Llama-2-7b-hf " + _HF,
           note="this preset uses T_max 4,096 (Llama 2's context; LLaMA-1 used 2,048); "
                "RoPE has no position parameters, so the count is the same: 6,738,415,616"),
    Preset("llama-70b", "llama",
           {"L": 80, "h": 64, "h_kv": 8, "d": 8192, "d_ff": 28672, "V": 32000, "T_max": 4096},
           source="Touvron et al. 2023 (Llama 2), Table 1 (GQA); "
                  "meta-llama/Llama-2-70b-hf " + _HF,
           note="Llama-2-70B has 8 key/value heads (grouped-query "
                "attention), which gives 68,976,648,192 parameters; with 64 it would be 78.5B"),
    Preset("llama-3-8b", "llama",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 128256, "T_max": 8192},
           source="meta-llama/Meta-Llama-3-8B " + _HF),
    Preset("mistral-7b", "mistral",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 32000, "T_max": 32768,
            "W": 4096},
           source="Jiang et al. 2023 (Mistral 7B), Table 1; mistralai/Mistral-7B-v0.1 " + _HF,
           note="v0.1 with its 4,096-token sliding window; v0.2 and later drop the window "
                "(set window=false)"),
    Preset("mixtral-8x7b", "mixtral",
           {"L": 32, "h": 32, "h_kv": 8, "d": 4096, "d_ff": 14336, "V": 32000, "T_max": 32768,
            "E": 8, "k": 2},
           source="Jiang et al. 2024 (Mixtral of Experts), Table 1; mistralai/Mixtral-8x7B-v0.1 " + _HF,
           note="46.7B parameters in total, 12.9B active per token (2 of 8 experts)"),
    Preset("qwen2-0.5b", "qwen2",
           {"L": 24, "h": 14, "h_kv": 2, "d": 896, "d_ff": 4864, "V": 151936, "T_max": 131072},
           flags={"tied": True}, source="Qwen/Qwen2-0.5B " + _HF),
    Preset("gemma-2b", "gemma",
           {"L": 18, "h": 8, "h_kv": 1, "d_head": 256, "d": 2048, "d_ff": 16384, "V": 256000,
            "T_max": 8192},
           source="Gemma Team 2024, Table 1; google/gemma-2b " + _HF),
    Preset("phi-3-mini", "phi3",
           {"L": 32, "h": 32, "d": 3072, "d_ff": 8192, "V": 32064, "T_max": 4096,
            "W": 2047},
           flags={"window": True}, source="microsoft/Phi-3-mini-4k-instruct " + _HF,
           note="the 4k-context model; its config sets a 2,047-token sliding window"),
    Preset("falcon-7b", "falcon",
           {"L": 32, "h": 71, "h_kv": 1, "d": 4544, "V": 65024, "T_max": 2048},
           source="tiiuae/falcon-7b " + _HF,
           note="multi-query attention (one key/value head), parallel attention and MLP"),
    Preset("pythia-160m", "gpt_neox",
           {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 50304, "T_max": 2048},
           source="Biderman et al. 2023 (Pythia), Table 1; EleutherAI/pythia-160m " + _HF),
    Preset("opt-125m", "opt",
           {"L": 12, "h": 12, "d": 768, "d_ff": 3072, "V": 50272, "T_max": 2048},
           source="Zhang et al. 2022 (OPT), Table 1; facebook/opt-125m " + _HF,
           note="the learned position table has T_max + 2 rows (OPT's offset)"),
)
