"""Presets of issue 16's decoders (DeepSeek, Qwen3 and Qwen-MoE, Gemma 2 and 3, Phi-2, StarCoder2,
OLMo 2): data rows, each equal to the model ``symgpt.load`` reads from the checkpoint's
config.json (tests/configs/ holds those files; tests/test_arch_decoders.py checks both against
transformers). Each note sets symgpt's exact count beside the count the publisher quotes."""

from __future__ import annotations

from .preset import Preset

_HF = "its config.json on the Hugging Face Hub"

ROWS: tuple[Preset, ...] = (
    Preset("deepseek-v3", "deepseek_v3",
           {"L": 61, "h": 128, "d": 7168, "d_ff": 2048, "V": 129280, "T_max": 163840, "E": 256, "k": 8},
           flags={"dense_ff": 18432, "shared_ff": 2048},
           source="DeepSeek-AI 2024 (DeepSeek-V3 Technical Report); deepseek-ai/DeepSeek-V3 " + _HF,
           note="671,026,404,352 parameters; published: 671B (the main model; the multi-token-"
                "prediction module's further 11.5B are not counted, as transformers does not build it). "
                "3 dense layers, then 58 with 256 routed experts (8 active) and 1 shared"),
    Preset("deepseek-v2-lite", "deepseek_v2",
           {"L": 27, "h": 16, "d": 2048, "d_ff": 1408, "V": 102400, "T_max": 163840, "E": 64, "k": 6},
           flags={"dense_ff": 10944, "shared_ff": 2816, "q_lora_rank": None, "n_group": None,
                  "topk_group": None},
           source="deepseek-ai/DeepSeek-V2-Lite " + _HF,
           note="15,706,484,224 parameters; published: 15.7B. Queries without compression (q_proj)"),
    Preset("qwen3-8b", "qwen3",
           {"L": 36, "h": 32, "h_kv": 8, "d_head": 128, "d": 4096, "d_ff": 12288, "V": 151936,
            "T_max": 40960},
           source="Qwen/Qwen3-8B " + _HF,
           note="8,190,735,360 parameters; published: 8.2B"),
    Preset("qwen3-30b-a3b", "qwen3_moe",
           {"L": 48, "h": 32, "h_kv": 4, "d_head": 128, "d": 2048, "d_ff": 768, "V": 151936,
            "T_max": 40960, "E": 128, "k": 8},
           flags={"topk_norm": True},
           source="Qwen/Qwen3-30B-A3B " + _HF,
           note="30,532,122,624 parameters; published: 30.5B in total, 3.3B active"),
    Preset("qwen1.5-moe-a2.7b", "qwen2_moe",
           {"L": 24, "h": 16, "h_kv": 16, "d": 2048, "d_ff": 1408, "V": 151936, "T_max": 8192,
            "E": 60, "k": 4},
           flags={"shared_ff": 5632},
           source="Qwen/Qwen1.5-MoE-A2.7B " + _HF,
           note="14,315,784,192 parameters; published: 14.3B in total, 2.7B active"),
    Preset("gemma-2-9b", "gemma2",
           {"L": 42, "h": 16, "h_kv": 8, "d_head": 256, "d": 3584, "d_ff": 14336, "V": 256000,
            "T_max": 8192, "W": 4096},
           flags={"query_scalar": 224},
           source="Gemma Team 2024 (Gemma 2), Table 1; google/gemma-2-9b " + _HF,
           note="9,241,705,984 parameters; published: 9B (8,324M non-embedding + 917,504K embedding). "
                "21 sliding-window layers and 21 full-attention ones"),
    Preset("gemma-3-1b", "gemma3_text",
           {"L": 26, "h": 4, "h_kv": 1, "d_head": 256, "d": 1152, "d_ff": 6912, "V": 262144,
            "T_max": 32768, "W": 512},
           source="Gemma Team 2025 (Gemma 3); google/gemma-3-1b-pt " + _HF,
           note="999,885,952 parameters; published: 1B (KerasHub's preset lists 999,885,952). "
                "22 sliding-window layers, 4 full-attention ones"),
    Preset("phi-2", "phi",
           {"L": 32, "h": 32, "d": 2560, "d_ff": 10240, "V": 51200, "T_max": 2048},
           source="microsoft/phi-2 " + _HF,
           note="2,779,683,840 parameters; published: 2.7B"),
    Preset("starcoder2-3b", "starcoder2",
           {"L": 30, "h": 24, "h_kv": 2, "d": 3072, "d_ff": 12288, "V": 49152, "T_max": 16384, "W": 4096},
           flags={"window": True},
           source="Lozhkov et al. 2024 (StarCoder 2); bigcode/starcoder2-3b " + _HF,
           note="3,030,371,328 parameters; published: 3B"),
    Preset("olmo2-7b", "olmo2",
           {"L": 32, "h": 32, "d": 4096, "d_ff": 11008, "V": 100352, "T_max": 4096},
           source="OLMo Team 2024 (2 OLMo 2 Furious); allenai/OLMo-2-1124-7B " + _HF,
           note="7,298,617,344 parameters; published: 7B"),
)
