"""JetMoE (Shen et al. 2024, "JetMoE: Reaching Llama2 Performance with 0.1M Dollars";
transformers' JetMoeForCausalLM): every layer has a mixture of attention heads (``JetMoeMoA``:
E query/output-projection experts, k per token, each giving the token h_kv query heads over
h_kv shared key/value heads; ``blocks/moa.py``) and a mixture of E GLU experts (``JetMoeMoE``:
a fused gate/up projection per expert), each router taking the softmax of its k largest logits,
each mixture followed by a learned bias."""

from __future__ import annotations

from .decoders import decoder_family
from .fields import Fields, Reader, rotary_pct

#: JetMoeTopKGating: the softmax of the k largest logits (a router choice of the family's own)
ROUTER = dict(router="topk_softmax", topk_norm=False,
              choice_changes={"router": ("topk_softmax", "softmax", "sigmoid")},
              help_changes={"router": "topk_softmax (the softmax of the k largest logits), softmax or sigmoid "
                                      "router scores"})

FAMILIES = (decoder_family(
    "jetmoe", "JetMoE: a mixture of attention heads and a mixture of GLU experts in every layer",
    added={"moa": True, "experts_bias": True},
    added_help={"moa": "a mixture of attention heads (JetMoeMoA): E query/output-projection experts, k per token, "
                       "each with h_kv heads over shared keys and values",
                "experts_bias": "a learned bias after each mixture's weighted sum (JetMoE)"},
    moe=True, fused_gate_up=True, tied=True, gqa=True, **ROUTER),)


def read(f: Fields):
    """transformers' JetMoeConfig (``num_attention_heads`` is set to num_key_value_heads ×
    num_experts_per_tok by the configuration class itself)."""
    f.rename({"head_dim": "kv_channels"})
    kv, k = f.int("num_key_value_heads", 16), f.int("num_experts_per_tok", 2)
    sizes = {"V": f.int("vocab_size", 32000), "d": f.int("hidden_size", 2048), "L": f.int("num_hidden_layers", 12),
             "h": kv * k, "h_kv": kv, "d_head": f.int("kv_channels", 128), "d_ff": f.int("intermediate_size", 5632),
             "T_max": f.int("max_position_embeddings", 4096), "E": f.int("num_local_experts", 8), "k": k}
    flags = {"tied": f.bool("tie_word_embeddings", True),
             "activation": f.activation("activation_function", "silu"), "rotary_pct": rotary_pct(f)}
    f.silent("num_attention_heads", "aux_loss_coef")
    return "jetmoe", flags, sizes


READERS = {"jetmoe": Reader(read, ("JetMoeForCausalLM",))}

PRESETS = ()
