"""Sarvam-M MLA (Sarvam AI; transformers' SarvamMLAConfig, built as DeepseekV3ForCausalLM):
DeepSeek-V3's architecture -- multi-latent attention without query compression, one dense layer,
then 128 routed experts (8 per token, sigmoid scores) and one shared expert."""

from __future__ import annotations

from .deepseek import mla_family, read_mla
from .fields import Fields, Reader

FAMILIES = (mla_family("sarvam_mla", "Sarvam MLA: DeepSeek-V3's architecture (multi-latent attention, one dense layer, "
                    "routed (sigmoid) + shared experts)",
                    {"dense_layers": 1, "router": "sigmoid"}, {"q_lora_rank": None, "n_group": 1, "topk_group": 1}),)


def read(f: Fields):
    """transformers' SarvamMLAConfig (its attribute_map names the experts as Mixtral and Qwen do)."""
    f.rename({"num_local_experts": "n_routed_experts", "num_experts": "n_routed_experts",
              "num_mtp_layers": "num_nextn_predict_layers", "num_shared_experts": "n_shared_experts"})
    return read_mla(f, "sarvam_mla", dict(V=262144, d=4096, L=32, h=64, T_max=4096, moe_ff=2048, E=128, k=8,
                                       ff=16384, dense=1, shared=1, scoring="sigmoid", norm=True, groups=(1, 1),
                                       grouped=True, q_lora=None))


READERS = {"sarvam_mla": Reader(read, ("DeepseekV3ForCausalLM",))}

PRESETS = ()
