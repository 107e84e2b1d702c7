"""Models whose reader says transformers runs them in a way symgpt does not cache or generate
with (an encoder under a causal mask; GIT's causal-over-text, bidirectional-over-image mask):
every ``inference.*`` quantity and ``symgpt infer``/``serve`` refuse in one line, while the
parameters (against transformers' own count, tests/test_zoo.py / test_vlm_zoo.py) still answer.

Oracle: the reader's own note (each such model's notes say a KV cache and generation are not
modelled), read back here: an answer must never contradict its note."""

from __future__ import annotations

from pathlib import Path

import pytest

import symgpt
from symgpt.cli import main
from symgpt.families.fields import NO_GENERATION

CONFIGS = Path(__file__).parent / "configs"
CASES = [CONFIGS / "vlm_zoo" / "git.json", CONFIGS / "zoo" / "bert.json", CONFIGS / "zoo" / "roberta.json",
         CONFIGS / "zoo" / "electra.json"]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_inference_refuses_what_the_notes_say_is_not_modelled(path, capsys):
    m = symgpt.load(str(path), B=1, T=16)
    assert any(NO_GENERATION in n for n in m.notes)
    assert int(m.params.value) > 0
    for q in ("inference.kv_cache", "inference.decode.flops", "inference.memory"):
        with pytest.raises(symgpt.SymgptError, match="inference is not modelled"):
            m.quantity(q)
    for argv in (["infer", str(path), "--hardware", "h100-sxm", "--set", "T=16"],
                 ["serve", str(path), "--hardware", "h100-sxm", "--set", "T=16"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "inference is not modelled" in err, err


def test_a_decoder_still_answers():
    m = symgpt.load(str(CONFIGS / "gpt2.json"), B=1, T=16)
    assert not any(NO_GENERATION in n for n in m.notes)
    assert m.quantity("inference.kv_cache").value == 2 * 12 * 16 * 768 * 2  # K and V, 12 layers, 16 tokens, fp16
