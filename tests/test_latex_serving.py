"""The LaTeX ``serving`` section: paged-KV capacity against T, decode throughput against the
batch and speculative decoding's speed-up against the acceptance rate, on the report's hardware
profile (h100-sxm).

Oracles: gpt2-small's capacity worked by hand from its sizes and the H100 SXM datasheet's 80 GB
(vLLM's budget: 9/10 of the memory less the 16-bit weights and the largest prefill activation);
the speculative speed-up printed by ``symgpt serve --draft ... --json`` (a separate path through
the CLI); the decode step against ``inference.decode.time``; the reasons a model is left out."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction

import sympy

import symgpt
from symgpt.documents.latex_doc import fragment
from symgpt.documents.workload import report_model


def _tex(name, **sizes):
    return fragment(report_model(symgpt.load(name, **sizes)), "serving")


def _int(text):
    return int(text.replace("{,}", ""))


def _row(tex, head):
    line = next(ln for ln in tex.splitlines() if ln.strip().startswith(head))
    return [_int(c) for c in re.findall(r"\$([\d{},]+)\$", line)]


def test_gpt2_small_capacity_by_hand():
    tex = _tex("gpt2-small")
    params = 124_439_808                      # the released checkpoint
    weights = 2 * params                      # 16-bit
    workspace = 2048 * 50257 * 2              # the logits of a 2048-token prefill, 16-bit
    budget = 80 * 10**9 * 9 // 10 - weights - workspace
    per_block = 16 * 12 * (768 * 2 + 768 * 2)   # 16 tokens x 12 layers x (K + V) x 2 bytes
    assert f"{budget:,}".replace(",", "{,}") in tex and f"{per_block:,}".replace(",", "{,}") in tex
    Ts, Ns = _row(tex, "$T$ &"), _row(tex, "$N_{\\mathrm{seq}}$ &")
    assert Ts == [16, 32, 64, 128, 256, 512, 1024]
    assert Ns == [budget // (per_block * -(-t // 16)) for t in Ts]
    assert "h100-sxm" in tex and "NVIDIA H100 SXM" in tex
    # the figure plots the same integers
    coords = re.search(r"\\addplot\[blue[^\]]*\] coordinates \{([^}]*)\}", tex).group(1)
    assert coords.split() == [f"({t},{n})" for t, n in zip(Ts, Ns)]
    # gpt2-small is its family's smallest preset: no draft, said in a sentence
    assert "Speculative decoding is not drawn" in tex


def test_capacity_matches_the_engine_at_each_T():
    from symgpt.derive import serving

    for name in ("llama-7b", "mistral-7b"):
        tex = _tex(name)
        for t, n in zip(_row(tex, "$T$ &"), _row(tex, "$N_{\\mathrm{seq}}$ &")):
            assert serving.max_sequences(symgpt.load(name, T=t), hardware="h100-sxm",
                                          attention="flash").value == n, (name, t)


def test_throughput_is_batch_over_the_decode_step():
    from symgpt.derive.inference_time import phase_time

    tex = _tex("gpt2-small")
    coords = re.search(r"\\addplot\[red[^\]]*\] coordinates \{([^}]*)\}", tex).group(1)
    first = dict((int(b), Fraction(v)) for b, v in re.findall(r"\(([\d]+),([\d.e+]+)\)", coords))
    q = phase_time(symgpt.load("gpt2-small", B=1, T=1024), "decode", hardware="h100-sxm", attention="flash")
    rate = 1 / sympy.Rational(q.value)
    assert abs(first[1] - Fraction(int(rate.p), int(rate.q))) <= Fraction(1, 10) * 1


def test_speculative_speedup_matches_symgpt_serve():
    tex = _tex("gpt2-large")
    assert "\\texttt{gpt2-small}" in tex
    out = subprocess.run([sys.executable, "-m", "symgpt", "serve", "gpt2-large", "--hardware", "h100-sxm",
                          "--set", "T=1024", "--set", "B=1", "--draft", "gpt2-small", "--gamma", "4",
                          "--acceptance", "0.7", "--json"], capture_output=True, text=True, check=True).stdout
    exact = Fraction(json.loads(out)["serving.speculative.speedup"]["exact_value"])
    series = re.findall(r"coordinates \{([^}]*)\};\n\s*\\addlegendentry\{\$\\gamma = (\d+)\$\}", tex)
    by_gamma = {int(g): dict(re.findall(r"\(([\d.]+),([\d.e+]+)\)", c)) for c, g in series}
    assert sorted(by_gamma) == [2, 4, 8]
    shown = Fraction(by_gamma[4]["0.7"])
    assert abs(shown - exact) <= exact * Fraction(1, 10**5)
    # alpha = 0: one token per step, the speed-up is the plain step over the speculative one (< 1)
    assert Fraction(by_gamma[2]["0"]) < 1


def test_models_left_out_say_why_in_one_sentence():
    for name, why, sizes in (("mamba", "recurrent layers", {"T": 2048}), ("t5-small", "encoder--decoder", {}),
                             ("bert-base", "bidirectional encoder", {})):
        tex = _tex(name, **sizes)
        body = [ln for ln in tex.splitlines() if not ln.startswith("%")]
        assert len(body) == 1 and why in body[0] and "symgpt serve" in body[0], (name, tex)
        assert "\\begin{figure}" not in tex


def test_a_model_too_large_for_eight_devices_says_so():
    tex = _tex("deepseek-v3")
    assert "none of these" in tex and "on 8 devices the weights" in tex and "\\begin{figure}" not in tex


def test_symgpt_latex_what_serving():
    r = subprocess.run([sys.executable, "-m", "symgpt", "latex", "gpt2-small", "--what", "serving"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "N_{\\mathrm{seq}}(T)" in r.stdout and "\\begin{loglogaxis}" in r.stdout
