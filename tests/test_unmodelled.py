"""The model types symgpt knows it does not model are refused in one line naming what they need,
never as "unknown"; the list never names a type a family reads. Oracle: transformers 5.24.0's
own configurations of those types (tests/configs/zoo/) and its causal-LM mapping (the zoo table)."""

import json
from pathlib import Path

import pytest

import symgpt
from symgpt.families import readers
from symgpt.families.unmodelled import NOT_MODELLED
from vlm_zoo_coverage import CONFIG_DIR as VLM_CONFIG_DIR
from zoo_coverage import CONFIG_DIR, read_table

#: transformers' own configurations: the causal-LM zoo's, then the image-text-to-text and speech ones
CONFIGS = sorted(CONFIG_DIR.glob("*.json")) + sorted(VLM_CONFIG_DIR.glob("*.json"))


def test_the_list_and_the_readers_never_overlap():
    assert not set(NOT_MODELLED) & set(readers())


def _config_of(model_type):
    """The zoo configuration whose (text) model_type is *model_type*."""
    for path in CONFIGS:
        if json.loads(path.read_text()).get("model_type") == model_type:
            return path
    return None


def test_every_listed_type_is_one_transformers_ships():
    table = read_table()
    shipped = {json.loads(p.read_text()).get("model_type") for p in CONFIGS}
    assert set(NOT_MODELLED) <= shipped, sorted(set(NOT_MODELLED) - shipped)
    assert table  # the table these configurations were written with


@pytest.mark.parametrize("model_type", sorted(NOT_MODELLED))
def test_a_listed_type_is_refused_with_what_it_needs(model_type):
    path = _config_of(model_type)
    with pytest.raises(symgpt.SymgptError) as e:
        symgpt.load(str(path)).params
    text = str(e.value)
    assert "\n" not in text and f"model_type {model_type!r} is not modelled yet" in text
    assert NOT_MODELLED[model_type] in text
