"""An MLA model's inference answers name how its decode is priced: transformers' DeepseekV3Attention
re-expands the cached latent through kv_b_proj at every step (its ``forward``: ``kv_b_proj`` over
the whole cache), more work than DeepSeek's absorbed form; the answer says it is an upper bound.
A model without MLA carries no such note."""

import symgpt


def _notes(name):
    q = symgpt.load(name, B=1, T=64).quantity("inference.decode.flops", hardware="h100-sxm")
    return [n for n in q.notes if "multi-latent attention decoded" in n]


def test_mla_decode_names_the_expanded_form_and_the_upper_bound():
    (note,) = _notes("deepseek-v2-lite")
    assert "kv_b_proj" in note and "upper bound" in note and "absorbed" in note


def test_a_model_without_mla_has_no_such_note():
    assert _notes("llama-7b") == []
