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
}


def flag_sizes(flags) -> dict[str, int]:
    """The symbols' values a model's *flags* bind (a flag left unset binds nothing)."""
    return {name: v for flag, name in FLAG_SYMBOLS.items()
            if type(v := flags.get(flag)) is int}
