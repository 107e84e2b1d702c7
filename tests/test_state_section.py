"""The report's ``state`` section (``documents.latex_state``) for models with recurrent layers: the
table of one generating sequence's KV cache and recurrent state against T, beside the nearest
Transformer preset's KV cache. Oracle: hand formulas from the configs' own numbers -- per
Mamba-1 layer intermediate_size × conv_kernel inputs at 2 bytes and intermediate_size ×
state_size in fp32; per Gated DeltaNet layer (2·key_dim + value_dim) × conv kernel at 2 bytes
and heads × d_k × d_v in fp32, per full-attention layer 2 × kv heads × head_dim × T at 2 bytes
(tests/test_recurrent_inference.py checks the same layouts against transformers' cache); for a
Llama-style or GPT-2 Transformer 2 × L × kv heads × head_dim × T at 2 bytes. The rendered cells
are the same numbers, in order. A report of a Transformer has no such section."""

import json
import re
from pathlib import Path

import pytest

import symgpt
from symgpt.documents import latex_state
from symgpt.documents.latex_doc import context, expand, fragment
from symgpt.documents.workload import report_model
from symgpt.core.notation import notation
from symgpt.render.latex_numbers import tex_bytes

EX = Path(__file__).resolve().parents[1] / "examples"


def _mamba(t):
    c = json.loads((EX / "mamba-config.json").read_text())
    per = c["intermediate_size"] * (2 * c["conv_kernel"] + 4 * c["state_size"])
    return 0, c["num_hidden_layers"] * per


def _qwen3_next(t):
    c = json.loads((EX / "qwen3-next-config.json").read_text())
    kinds = c["layer_types"]
    key = c["linear_num_key_heads"] * c["linear_key_head_dim"]
    value = c["linear_num_value_heads"] * c["linear_value_head_dim"]
    per_linear = (2 * key + value) * c["linear_conv_kernel_dim"] * 2 + \
        c["linear_num_value_heads"] * c["linear_key_head_dim"] * c["linear_value_head_dim"] * 4
    kv = kinds.count("full_attention") * 2 * c["num_key_value_heads"] * c["head_dim"] * t * 2
    return kv, kinds.count("linear_attention") * per_linear


#: (config, the Transformer preset nearest in parameters, its KV cache per token: 2·L·h_kv·d_head·2)
CASES = {
    "mamba": ("mamba-config.json", _mamba, "gpt2-small", 2 * 12 * 12 * 64 * 2),         # 129M vs 124M
    "qwen3-next": ("qwen3-next-config.json", _qwen3_next, "llama-3.1-70b-instruct", 2 * 80 * 8 * 128 * 2),
}


def _model(case):
    return report_model(symgpt.load(str(EX / CASES[case][0]), T=2048))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_table_cells_are_the_derived_quantities(case):
    m = _model(case)
    _, hand, ref, per_token = CASES[case]
    ctx = context("state", m, notation("default"))
    table = ctx["table"]
    assert table["reference"] == ref
    assert [r["t"] for r in table["rows"]] == [1024, 4096, 32768, 131072, 1048576]
    for r in table["rows"]:
        kv, state = hand(r["t"])
        assert (r["kv"], r["state"], r["total"]) == (kv, state, kv + state)
        assert r["ref"] == per_token * r["t"]
    # the rendered table shows these numbers, row by row
    tex = fragment(m, "state")
    body = tex[tex.index(r"\label{tab:symgpt-" + ctx["key"] + "-state}"):]
    lines = [ln for ln in body.splitlines() if re.match(r"\s*\$\d", ln) and ln.rstrip().endswith(r"\\")]
    assert len(lines) == len(table["rows"])
    for line, r in zip(lines, table["rows"]):
        cells = [c.strip() for c in line.rstrip().rstrip("\\").split("&")]
        assert cells[0] == "$" + f"{r['t']:,}".replace(",", "{,}") + "$"
        assert cells[1:] == [f"${tex_bytes(v)}$" for v in (r["kv"], r["state"], r["total"], r["ref"])]


def test_the_state_is_constant_and_the_transformers_cache_grows():
    table = context("state", _model("qwen3-next"), notation("default"))["table"]
    assert len({r["state"] for r in table["rows"]}) == 1
    # past some length the hybrid's whole memory is below the Transformer's KV cache
    assert table["rows"][-1]["total"] < table["rows"][-1]["ref"]


def test_the_state_equation_is_the_derived_state():
    m = _model("mamba")
    tex = fragment(m, "state")
    q = m.quantity("inference.state")
    value = f"{int(q.value):,}".replace(",", "{,}")
    assert re.search(r"M_\{\\text\{state\}\} &= .*\\\\\n\s*&= " + re.escape(value), tex)


def test_a_transformer_report_has_no_state_section():
    m = symgpt.load("gpt2-small")
    assert "state" not in expand("all", m)
    assert "state" in expand("all", _model("mamba"))
    assert "no recurrent layer" in fragment(m, "state")


def test_the_nearest_preset_is_by_parameter_ratio():
    assert latex_state.reference(124_000_000) == "gpt2-small"
    assert latex_state.reference(8_000_000_000) == "llama-3.1-8b"
    assert latex_state.reference(None) is None


@pytest.mark.parametrize("config", ["qwen3-next-config.json", "../tests/configs/zoo/rwkv.json"])
def test_the_section_compiles_with_its_named_packages_and_shows_its_numbers(config, tmp_path):
    """Oracle: pdflatex -- no error, nothing past the margin by more than a few points (its
    "Overfull \\hbox" lines), the state's exact byte count in the PDF's text."""
    import helpers
    from test_latex_fragments_alone import alone, pieces

    m = report_model(symgpt.load(str(EX / config), T=2048))
    ((pkgs, piece),) = pieces(fragment(m, "state"))
    tex = tmp_path / "state.tex"
    tex.write_text(alone(pkgs, piece))
    code, log, text = helpers.compile_tex(tex)
    assert code == 0, log[-2000:]
    over = [float(x) for x in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)]
    assert all(x <= 5.0 for x in over), over
    words = re.sub(r"\s+", " ", text)
    state = int(m.quantity("inference.state").value)
    assert f"{state:,}" in words
