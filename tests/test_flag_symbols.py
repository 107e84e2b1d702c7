"""Sizes read as integer flags are shown as symbols of their own, bound to the flag's value: the
multi-latent attention ranks and head dimensions (r_q, r_kv, d_nope, d_rope, d_hv) and the widths
of a mixture's dense layers and shared expert (d_ff_dense, d_ff_shared).

Oracles: DeepSeek-V2's parameter count of one MLA layer (DeepSeek-AI 2024, "DeepSeek-V2",
Sec. 2.1: W^DQ d x r_q, its RMSNorm r_q, W^UQ and W^QR r_q x h (d_nope + d_rope), W^DKV and
W^KR d x (r_kv + d_rope), its RMSNorm r_kv, W^UK and W^UV r_kv x h (d_nope + d_v), W^O h d_v x d)
written by hand; the SwiGLU widths of the dense layers and the shared expert by hand; the
published DeepSeek-V3 total (671,026,404,352, the count transformers' DeepseekV3ForCausalLM
builds: the preset's note)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.core.symbols import CANONICAL, FLAG_SYMBOLS

S = {n: CANONICAL[n] for n in ("d", "h", "L", "E", "d_ff", "V", "r_q", "r_kv", "d_nope", "d_rope", "d_hv",
                               "d_ff_dense", "d_ff_shared")}


def _attention(m):
    """The parameters of one dense layer's attention (the first stack), by the breakdown."""
    return sympy.expand(sum((e for p, e in m.params.breakdown if p.startswith("dense_blocks/attention/")),
                            sympy.Integer(0)) / 3)


def test_mla_layer_is_the_papers_formula_over_its_own_symbols():
    m = symgpt.load("deepseek-v3")
    d, h, rq, rkv, nope, rope, v = (S[n] for n in ("d", "h", "r_q", "r_kv", "d_nope", "d_rope", "d_hv"))
    paper = (d * rq + rq + rq * h * (nope + rope) + d * (rkv + rope) + rkv + rkv * h * (nope + v) + h * v * d)
    assert sympy.expand(_attention(m) - paper) == 0
    # no size is left an integer in the closed form (the 57410 d, 425984 h, 8258 d)
    coefficients = {abs(t.as_coeff_Mul()[0]) for t in sympy.Add.make_args(m.params.expr)}
    assert max(coefficients) <= 9, sorted(coefficients)


def test_dense_and_shared_widths_are_symbols_and_the_total_is_unchanged():
    m = symgpt.load("deepseek-v3")
    d, dense, shared, L = S["d"], S["d_ff_dense"], S["d_ff_shared"], S["L"]
    ffn = sympy.expand(sum((e for p, e in m.params.breakdown if "/ffn/" in p and "shared" in p), sympy.Integer(0)))
    assert sympy.expand(ffn - (L - 3) * 3 * d * shared) == 0          # gate, up, down of the shared expert
    dense_ffn = sum((e for p, e in m.params.breakdown if p.startswith("dense_blocks/ffn/")), sympy.Integer(0))
    assert sympy.expand(dense_ffn - 3 * 3 * d * dense) == 0           # three dense SwiGLU layers
    assert m.params.value == 671_026_404_352
    assert {n: int(m.sizes[n]) for n in ("r_q", "r_kv", "d_nope", "d_rope", "d_hv", "d_ff_dense", "d_ff_shared")} \
        == {"r_q": 1536, "r_kv": 512, "d_nope": 128, "d_rope": 64, "d_hv": 128, "d_ff_dense": 18432,
            "d_ff_shared": 2048}


def test_setting_the_symbol_sets_its_flag():
    by_flag = symgpt.load("deepseek-v3", kv_lora_rank=256, dense_ff=9216)
    by_symbol = symgpt.load("deepseek-v3", r_kv=256, d_ff_dense=9216)
    assert by_symbol.flags["kv_lora_rank"] == 256 and by_symbol.flags["dense_ff"] == 9216
    assert by_symbol.params.value == by_flag.params.value
    # the hand-worked change: 61 layers x (512 - 256) x (d + 1 + h (d_nope + d_hv)) fewer,
    # and 3 layers x 3 x d x (18432 - 9216) fewer
    base = symgpt.load("deepseek-v3").params.value
    assert base - by_flag.params.value == 61 * 256 * (7168 + 1 + 128 * (128 + 128)) + 3 * 3 * 7168 * 9216
    with pytest.raises(symgpt.SymgptError, match="set only one"):
        symgpt.load("deepseek-v3", r_kv=256, kv_lora_rank=128)


def test_an_unset_flag_binds_nothing_and_a_freed_symbol_stays_free():
    lite = symgpt.load("deepseek-v2-lite")                     # one q_proj: no query latent
    assert "r_q" not in lite.sizes and S["r_q"] not in lite.params.expr.free_symbols
    m = symgpt.load("deepseek-v3")
    free = m.free("r_kv")
    assert "r_kv" not in free.sizes and free.params.value is None
    assert free.params.expr.xreplace({S["r_kv"]: 512}).xreplace(free.bindings) == m.params.value
    assert "d_ff_dense" not in symgpt.load("gpt2-small").sizes


def test_the_cached_answer_binds_the_same_symbols(tmp_path):
    """``symgpt params PRESET`` answered from the derivation cache prints what the derivation does."""
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(tmp_path)}
    run = [sys.executable, "-m", "symgpt", "params", "deepseek-v3"]
    first = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout
    second = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout
    assert first == second
    assert "r_kv=512" in first and "671,026,404,352" in first
    assert list((tmp_path / "derivations").glob("*.json"))


def test_each_flag_symbol_has_a_meaning_and_notation():
    from symgpt.core.notation import notation
    from symgpt.core.symbols import MEANING

    shown = notation("default")
    for flag, name in FLAG_SYMBOLS.items():
        assert name in CANONICAL and MEANING[name]
        assert shown.symbol(name) != name.replace("_", "")
    assert shown.symbol("d_nope") == r"d_h^{\mathrm{nope}}"
    assert json.dumps(sorted(FLAG_SYMBOLS))  # plain data (the cached answers read it without SymPy)
