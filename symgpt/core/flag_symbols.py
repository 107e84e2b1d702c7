"""The sizes a family reads as integer flags and shows as symbols of their own (the standard
library only: the cached answers of ``symgpt.cli.cached`` read it without SymPy).

A family that has one of these flags builds with its symbol where the flag is set, and a model
binds the symbol to the flag's value (setting the symbol sets the flag). The flag, not the
symbol, chooses the graph (unset: no query latent, the layers' d_ff).
"""

#: flag -> the canonical name of the symbol that shows its value (``symgpt.core.symbols``)
FLAG_SYMBOLS: dict[str, str] = {
    "q_lora_rank": "r_q", "kv_lora_rank": "r_kv", "qk_nope_dim": "d_nope", "qk_rope_dim": "d_rope",
    "v_head_dim": "d_hv", "dense_ff": "d_ff_dense", "shared_ff": "d_ff_shared", "expert_ff": "d_ff_expert",
    # layers of several kinds: each kind's stack is counted in a symbol of its own (L_ followed by
    # the layer's sublayers: ssm = a Mamba mixer, attn = attention, mlp = a dense FFN, moe = a
    # mixture of experts, par = attention and Mamba in parallel; lin = a linear-attention layer,
    # conv = a short-convolution layer, rec = a recurrent (RG-LRU) layer, hyb = a Zamba layer with
    # the shared transformer block)
    **{flag: name for flag, name in (
        ("mamba_layers", "L_ssm"), ("mamba_mlp_layers", "L_ssm_mlp"), ("mamba_moe_layers", "L_ssm_moe"),
        ("attention_layers", "L_attn"), ("attention_mlp_layers", "L_attn_mlp"),
        ("attention_moe_layers", "L_attn_moe"), ("mlp_layers", "L_mlp"), ("moe_layers", "L_moe"),
        ("parallel_mlp_layers", "L_par_mlp"), ("linear_layers", "L_lin"), ("conv_layers", "L_conv"),
        ("recurrent_layers", "L_rec"), ("hybrid_layers", "L_hyb"))},
}

#: the symbols of :data:`FLAG_SYMBOLS` that count the layers of one kind (one stack each)
LAYER_KINDS: frozenset[str] = frozenset(name for flag, name in FLAG_SYMBOLS.items() if flag.endswith("_layers"))


def flag_sizes(flags) -> dict[str, int]:
    """The symbols' values a model's *flags* bind (a flag left unset binds nothing)."""
    return {name: v for flag, name in FLAG_SYMBOLS.items()
            if type(v := flags.get(flag)) is int}
