"""benchmarks/peers.py: reading each peer tool's output and normalising it (MACs -> FLOPs), and
the conventions and faults that set its answer beside symgpt's count.

The canned lines are what ``benchmarks/peer_child.py`` printed in real runs on this machine
(2026-11-30, in the environments ``benchmarks/envs.py`` builds: calflops 0.3.2, fvcore
0.1.5.post20221221, ptflops 0.7.5, torch 2.13.0 CPU, transformers 5.24.0) for GPT-2-small on the
meta device, B = 1, T = 1024. The oracle is hand arithmetic on GPT-2-small's shapes, written
below; no timing is asserted.
"""

from __future__ import annotations

import pytest

import symgpt
from benchmarks import peers

CALFLOPS = ('{"raw": {"flops": 291897689088, "macs": 145824153600, "params": 124439808}, "text": "", '
            '"imports": 4.93372756700046, "times": [2.1993398049999087, 0.16061063300003298]}')
PTFLOPS_PYTORCH = ('{"raw": {"macs": 232967980032, "params": 124439808}, "text": "Warning! No positional inputs '
                   'found for a module, assuming batch size is 1.\\n", "imports": 1.3438822299995081, '
                   '"times": [3.1331475079987285]}')
PTFLOPS_ATEN = ('{"raw": {"macs": 145909088256, "params": 124439808}, "text": "", "imports": 2.411420075000933, '
                '"times": [3.41765699500138]}')
FVCORE = ('{"raw": {"flops": 145922457600, "by_operator": {"layer_norm": 98304000, "addmm": 86973087744, '
          '"matmul": 19327352832, "linear": 39523713024}, "unsupported": {"aten::embedding": 2, "aten::add": 64, '
          '"aten::new_ones": 1, "aten::le": 1, "aten::where": 1, "aten::mul": 60, "aten::softmax": 12, '
          '"aten::pow": 12, "aten::tanh": 12}, "params": 124439808}, "text": "", "imports": 2.946926065998923, '
          '"times": [3.697517673999755]}')

# GPT-2-small by hand: L = 12, d = 768, h = 12, V = 50257, T_max = 1024; B = 1, T = 1024.
L, d, h, V, T = 12, 768, 12, 50257, 1024
PARAMS = V * d + T * d + L * (12 * d * d + 13 * d) + 2 * d
MACS = L * T * (3 * d * d + d * d + 4 * d * d + 4 * d * d) + L * 2 * T * T * d + T * d * V
LN_ELEMENTS = (2 * L + 1) * T * d          # two LayerNorms per block and the final one
SOFTMAX_ELEMENTS = L * h * T * T
BIAS_ROWS = L * (3 * d + d + 4 * d + d)    # c_attn, attn c_proj, c_fc, mlp c_proj


def peer(tool: str) -> peers.Peer:
    return next(p for p in peers.PEERS if p.tool == tool)


@pytest.fixture(scope="module")
def sym():
    """What ``peers._symgpt`` computes in its child, here in-process."""
    m = symgpt.load("gpt2-small", B=1, T=1024)
    return {"params": int(m.params.value), "flops": int(m.quantity("flops.forward").value),
            "sizes": {k: int(v) for k, v in m.sizes.items()},
            "by_peer": {p.name: int(m.quantity("flops.forward", **p.conventions["gpt2"][0]).value)
                        for p in peers.PEERS}}


def test_hand_counts_are_symgpt_default(sym):
    assert sym["params"] == PARAMS == 124_439_808
    assert sym["flops"] == 2 * MACS


@pytest.mark.parametrize("line, tool, value, flops", [
    (CALFLOPS, "calflops", 2 * MACS + 5 * LN_ELEMENTS + SOFTMAX_ELEMENTS + BIAS_ROWS,
     2 * MACS + 5 * LN_ELEMENTS + SOFTMAX_ELEMENTS + BIAS_ROWS),          # already FLOPs
    (FVCORE, "fvcore", MACS + 5 * LN_ELEMENTS, 2 * (MACS + 5 * LN_ELEMENTS)),  # one 'flop' per MAC
    (PTFLOPS_ATEN, "ptflops-aten", MACS + T * BIAS_ROWS, 2 * (MACS + T * BIAS_ROWS)),
    (PTFLOPS_PYTORCH, "ptflops-pytorch",
     MACS + LN_ELEMENTS + SOFTMAX_ELEMENTS + 12 * T * L * d * d + BIAS_ROWS,
     2 * (MACS + LN_ELEMENTS + SOFTMAX_ELEMENTS + 12 * T * L * d * d + BIAS_ROWS)),
])
def test_parse_and_normalise(line, tool, value, flops):
    a = peers.answer(peer(tool), peers.parse(line)["raw"])
    assert a == {"params": PARAMS, "value": value, "flops": flops}


@pytest.mark.parametrize("line, tool, diff, explained", [
    (FVCORE, "fvcore", 0, False),                                        # exact under its convention
    (PTFLOPS_ATEN, "ptflops-aten", T * BIAS_ROWS, True),                 # the bias adds
    (CALFLOPS, "calflops", BIAS_ROWS, True),                             # each bias once, not per token
    (PTFLOPS_PYTORCH, "ptflops-pytorch", 12 * T * L * d * d + BIAS_ROWS, True),  # Conv1D counted twice
])
def test_compare_explains_the_difference(sym, line, tool, diff, explained):
    p = peer(tool)
    c = peers.compare(p, "gpt2", sym, peers.answer(p, peers.parse(line)["raw"]))
    assert c["diff"] == diff
    assert c["explained"] is explained


def test_parse_rejects_other_output():
    with pytest.raises(ValueError):
        peers.parse('{"flops": 1}')
    with pytest.raises(ValueError):
        peers.parse("Traceback (most recent call last):")


# llm-analysis 0.2.2's answer for GPT-2-small, from a real run of benchmarks/peer_child.py in
# benchmarks/.envs/llm-analysis (the same day): a closed form evaluated in floats.
LLM_ANALYSIS = ('{"raw": {"params": 123551232.0, "flops": 291648307200.0}, "text": "", "imports": '
                '0.8160298390012031, "times": [6.168199979583733e-05]}')


def test_llm_analysis_params_fault_is_exact(sym):
    p = peer("llm-analysis")
    a = peers.answer(p, peers.parse(LLM_ANALYSIS)["raw"])
    assert a["flops"] == 2 * MACS
    c = peers.compare(p, "gpt2", sym, a)
    # no position table, no linear biases (9d per layer), no LayerNorm biases (2d per layer + d)
    assert c["params_diff"] == -(T * d + 9 * d * L + 2 * d * L + d) == a["params"] - PARAMS
    assert c["params_explained"] and c["diff"] == 0


@pytest.mark.parametrize("bad", [1.5, 2.0 ** 60, "12", True])
def test_inexact_counts_are_refused(bad):
    with pytest.raises(ValueError):
        peers.answer(peer("llm-analysis"), {"params": 1, "flops": bad})
