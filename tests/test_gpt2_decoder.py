"""GPT-2 is a configuration of the generic decoder with its own flag vocabulary (aliases of the
decoder's flags); its counts stay the seeds' and the papers'."""

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.families import family
from symgpt.families.blocks.gpt2 import gpt2_flags
from symgpt.core.symbols import L, T_max, V, d, d_ff


def test_gpt2_keeps_its_own_flags():
    fam = family("gpt2")
    assert set(fam.flags) == {"tied", "qkv_bias", "bias", "vocab_multiple", "dropout", "loss"}
    with pytest.raises(SymgptError, match="unknown setting 'norm'.*nor a flag of gpt2"):
        symgpt.load("gpt2-small", norm="rmsnorm")


def test_bias_false_clears_every_bias():
    dec = gpt2_flags({**family("gpt2").flags, "bias": False})
    assert not any(dec[k] for k in ("qkv_bias", "proj_bias", "mlp_bias", "norm_bias"))
    # nanoGPT bias=False: 12Ld² + 2Ld (two LayerNorm scales) + Vd + T_max·d + d
    q = symgpt.load("gpt2", bias=False).params
    assert sympy.expand(q.expr - (12 * L * d**2 + 2 * L * d + V * d + T_max * d + d)) == 0
    assert symgpt.load("gpt2-small", bias=False).params == 124_337_664   # nanoGPT's count


def test_conflicting_bias_flags_are_refused():
    with pytest.raises(SymgptError, match="conflicting flags: qkv_bias=true"):
        symgpt.load("gpt2-small").with_(bias=False, qkv_bias=True)


def test_only_gpt2_sizes_shape_its_graph():
    # GPT-2 is multi-head with d_head = d/h: binding h_kv or d_head changes nothing (lecture note 7.3 §4.3)
    assert symgpt.load("gpt2-small", h_kv=4, d_head=32).params == 124_439_808
    # bound d_ff is its own symbol: per block 4d² + 2d·d_ff + d_ff + 9d (LayerNorms 4d, Q/K/V and
    # output 4d² + 4d, the MLP 2d·d_ff + d_ff + d), which is 12d² + 13d at d_ff = 4d
    q = symgpt.load("gpt2", d_ff=3072).free("d_ff").params
    assert sympy.expand(q.expr - (4 * L * d**2 + 2 * L * d * d_ff + L * d_ff + 9 * L * d + V * d
                                  + T_max * d + 2 * d)) == 0
    assert symgpt.load("gpt2-small", d_ff=3072).params == 124_439_808


def test_t_must_not_exceed_t_max():
    with pytest.raises(SymgptError, match="T must not exceed T_max"):
        symgpt.load("gpt2-small", T=2048).shapes()
