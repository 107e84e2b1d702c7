"""Built-in notation profiles, as data: canonical symbol name -> LaTeX math shown for it.

A profile changes how symbols are *displayed*, never what they are: the derivation is the same
and ``sympy.latex(expr, symbol_names=...)`` does the renaming at printing time. Symbols a
profile does not name fall back to ``default``. ``quantities`` names the totals (``params``).
Each profile is checked by the same validator as a user's profile file.
"""

PROFILES = {
    "default": {
        "description": "lecture-note symbols (L layers, T sequence length, d width, h heads, V vocabulary, B batch)",
        "symbols": {
            "B": "B", "T": "T", "T_max": r"T_{\max}", "d": "d", "h": "h", "h_kv": r"h_{\mathrm{kv}}",
            "d_head": "d_h", "L": "L", "V": "V", "d_ff": r"d_{\mathrm{ff}}", "E": "E", "k": "k",
            "W": "W", "T_enc": r"T_{\mathrm{enc}}", "T_dec": r"T_{\mathrm{dec}}",
            "L_dec": r"L_{\mathrm{dec}}", "S_img": "S", "P_patch": "P", "C_img": r"C_{\mathrm{img}}", "N_cls": r"N_{\mathrm{cls}}",
            "d_inner": r"d_{\mathrm{in}}", "d_state": r"d_{\mathrm{state}}", "d_conv": "K", "r_dt": r"r_{\Delta}",
            "h_ssm": r"h_{\mathrm{ssm}}", "G_ssm": "G", "Q_chunk": "Q",
            "N_img": r"N_{\mathrm{img}}", "d_v": r"d_{\mathrm{v}}", "h_v": r"h_{\mathrm{v}}", "L_v": r"L_{\mathrm{v}}",
            "d_ff_v": r"d_{\mathrm{ff,v}}",
            "N_mel": r"N_{\mathrm{mel}}", "T_src": r"T_{\mathrm{src}}",
            "N_aud": r"N_{\mathrm{aud}}", "d_a": r"d_{\mathrm{a}}", "h_a": r"h_{\mathrm{a}}", "L_a": r"L_{\mathrm{a}}",
            "d_ff_a": r"d_{\mathrm{ff,a}}",
            "r_q": r"r_{\mathrm{q}}", "r_kv": r"r_{\mathrm{kv}}", "d_nope": r"d_h^{\mathrm{nope}}",
            "d_rope": r"d_h^{\mathrm{rope}}", "d_hv": r"d_h^{\mathrm{v}}",
            "d_ff_dense": r"d_{\mathrm{ff}}^{\mathrm{dense}}", "d_ff_shared": r"d_{\mathrm{ff}}^{\mathrm{sh}}",
            "d_ff_expert": r"d_{\mathrm{ff}}^{\mathrm{exp}}",
            # layers of several kinds: each kind's count
            "L_ssm": r"L_{\mathrm{ssm}}", "L_ssm_mlp": r"L_{\mathrm{ssm,mlp}}", "L_ssm_moe": r"L_{\mathrm{ssm,moe}}",
            "L_attn": r"L_{\mathrm{attn}}", "L_attn_mlp": r"L_{\mathrm{attn,mlp}}",
            "L_attn_moe": r"L_{\mathrm{attn,moe}}", "L_mlp": r"L_{\mathrm{mlp}}", "L_moe": r"L_{\mathrm{moe}}",
            "L_par_mlp": r"L_{\mathrm{par,mlp}}", "L_lin": r"L_{\mathrm{lin}}", "L_conv": r"L_{\mathrm{conv}}",
            "L_rec": r"L_{\mathrm{rec}}", "L_hyb": r"L_{\mathrm{hyb}}",
        },
        "quantities": {"params": r"\#\theta", "flops": r"C", "memory": "M"},
    },
    "megatron": {
        "description": "Narayanan et al. 2021 / Korthikanti et al. 2022 (l layers, h width, "
                       "s sequence length, a heads, b batch, v vocabulary)",
        "symbols": {
            "B": "b", "T": "s", "T_max": r"s_{\max}", "d": "h", "h": "a", "h_kv": r"a_{\mathrm{kv}}",
            "d_head": r"h_{a}", "L": "l", "V": "v", "d_ff": r"h_{\mathrm{ff}}", "P_patch": "p",
        },
        "quantities": {"params": "P", "flops": "F", "memory": "M"},
    },
    "kaplan": {
        "description": "Kaplan et al. 2020 (n_layer, d_model, n_ctx, n_vocab)",
        "symbols": {
            "B": "B", "T": r"n_{\mathrm{ctx}}", "T_max": r"n_{\mathrm{ctx}}^{\max}", "d": r"d_{\mathrm{model}}",
            "h": r"n_{\mathrm{heads}}", "h_kv": r"n_{\mathrm{kv}}", "d_head": r"d_{\mathrm{head}}",
            "L": r"n_{\mathrm{layer}}", "V": r"n_{\mathrm{vocab}}", "d_ff": r"d_{\mathrm{ff}}",
        },
        "quantities": {"params": r"N_{\mathrm{total}}", "flops": "C", "memory": "M"},
    },
    "raschka": {
        "description": "Raschka's book (N blocks, L context length, n sequence length, "
                       "d width, H heads, V vocabulary, B batch)",
        "symbols": {
            "B": "B", "T": "n", "T_max": "L", "d": "d", "h": "H", "h_kv": r"H_{\mathrm{kv}}",
            "d_head": r"d_{H}", "L": "N", "V": "V", "d_ff": r"d_{\mathrm{ff}}", "P_patch": "p",
        },
        "quantities": {"params": "P", "flops": "C", "memory": "M"},
    },
}
