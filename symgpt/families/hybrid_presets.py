"""Presets of Mamba-2 hybrids whose config.json could not be copied: each row's shape fields come
from its publisher's own sources (named in ``source``), and tests/configs/assembled/ holds them as
a file that transformers' class is built from (tests/test_presets_hybrid.py)."""

from .base import Preset

PRESETS = (
    Preset("bamba-9b", "hybrid",
           {"V": 128256, "d": 4096, "d_ff": 14336, "h": 32, "h_kv": 8, "d_head": 128, "d_inner": 8192,
            "h_ssm": 128, "G_ssm": 1, "d_state": 128, "d_conv": 4, "Q_chunk": 256},
           flags={"rotary_pct": 50, "mamba_mlp_layers": 29, "attention_mlp_layers": 3},
           source="IBM 2024 (Bamba); ibm-ai-platform/Bamba-9B, its shapes as IBM's foundation-model-stack "
                  "declares the checkpoint (fms/models/bamba.py, _bamba_9_8b_config) and as fms-fsdp trained it "
                  "(fms_fsdp/utils/config_utils.py, model variant mamba_9.8b)",
           note="9,780,235,392 parameters; published: 9B (9.78B, foundation-model-stack/bamba's model table). "
                "32 layers: attention at 9, 18 and 27 (32 heads, 8 key/value heads, half of each head rotated), "
                "29 Mamba-2 mixers of 128 heads of 64 (one group, state 128); every layer then a SwiGLU MLP of "
                "14,336; untied output head"),
    Preset("granite-4.0-h-tiny", "hybrid",
           {"V": 100352, "d": 1536, "d_ff": 512, "E": 64, "k": 6, "h": 12, "h_kv": 4, "d_head": 128,
            "d_inner": 3072, "h_ssm": 48, "G_ssm": 1, "d_state": 128, "d_conv": 4, "Q_chunk": 256,
            "d_ff_shared": 1024},
           flags={"tied": True, "rotary_pct": None, "router": "topk_softmax", "topk_norm": False,
                  "shared_expert": "plain", "shared_ff": 1024, "mamba_mlp_layers": None, "mamba_moe_layers": 36,
                  "attention_moe_layers": 4},
           source="IBM 2025 (Granite 4.0); ibm-granite/granite-4.0-h-tiny, its model card's architecture table "
                  "and the Granite 4.0 vocabulary of foundation-model-stack (fms/models/granite_moe_hybrid.py)",
           note="6,939,037,248 parameters = the safetensors total of ibm-granite/granite-4.0-h-tiny-base; "
                "published: 7B in total, 1B active. 40 layers: 4 of attention (12 heads of 128, 4 key/value "
                "heads, no positional encoding) and 36 Mamba-2 mixers (48 heads of 64, state 128), each then "
                "64 SwiGLU experts of 512 (6 active) beside a shared expert of 1,024; tied output head"),
)
