"""symgpt against every causal-LM type transformers 5.24.0 ships (its default configurations).

Oracle: ``tests/oracles/zoo/transformers-5.24.0.json``, written once by
``tests/oracles/zoo_build.py`` from transformers itself -- for each ``model_type`` of
``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES``, the causal-LM class built from the default configuration on
the meta device: ``sum(p.numel() for p in model.parameters())``, and ``FlopCounterMode``'s total
for one eager forward of B=1, T=8 token ids with ``use_cache=False``. The configurations are
``tests/configs/zoo/<model_type>.json`` (``config.to_json_string(use_diff=False)``, with
``architectures`` naming the class). The test reads the table: it builds no torch model (building
the ~200 models takes minutes; rerun the script only after a transformers upgrade).

Each type is exact (symgpt's count equals transformers'), refused (one ``SymgptError`` line),
wrong (a different number) or a crash (any other exception). A wrong number or a crash fails the
test; the exact count may only grow (``EXACT_FLOOR``, raised as the breadth work lands). For the
exact types, forward FLOPs (default convention, which counts what FlopCounterMode counts) must
equal the table's wherever the table has them. The full coverage table is written to the test's
temporary folder and summarised in one printed line; a failure's message carries the offending
rows.
"""
from __future__ import annotations

import json

import pytest

from zoo_coverage import (CONFIG_DIR, VERSION, classify, counts, flops_counts, markdown, read_table,
                          table_path)

#: types whose exact parameter count symgpt reaches today; raise it as readers land, never lower it
EXACT_FLOOR = 148
# linear-attention hybrids: minimax, bailing_hybrid, kimi_linear (their FLOPs: tests/test_lightning.py,
# tests/test_kda.py, on CPU; the table has none, FlopCounterMode does not run them on meta)
EXACT_FLOOR += 3
# shared transformer blocks among Mamba layers: zamba, zamba2 (their FLOPs: tests/test_zamba.py, on CPU)
EXACT_FLOOR += 2
#: of those, types whose forward FLOPs equal FlopCounterMode's; raise it likewise
FLOPS_EXACT_FLOOR = 129
# vision--language readers: got_ocr2 (GotOcr2ForConditionalGeneration is a causal-LM class too;
# its tower held, the forward over token ids exact)
EXACT_FLOOR += 1
FLOPS_EXACT_FLOOR += 1
# Fuyu (its image patches a linear map), Gemma 4 read whole without towers (causal-LM classes too)
EXACT_FLOOR += 3
FLOPS_EXACT_FLOOR += 3
# vision--language models, second wave: git (GitForCausalLM, its CLIP tower held, the forward over token ids exact)
EXACT_FLOOR += 1
FLOPS_EXACT_FLOOR += 1

#: known wrong numbers, each being fixed; remove the entry when the fix lands (the test fails
#: while a listed type is no longer wrong, so the list cannot go stale)
KNOWN_WRONG = {
}


@pytest.fixture(scope="module")
def table():
    return read_table()


@pytest.fixture(scope="module")
def rows(table):
    return classify(table, frozenset(KNOWN_WRONG))


def _report(rows, tmp_path_factory) -> str:
    c = counts(rows)
    f = flops_counts(rows)
    out = tmp_path_factory.mktemp("zoo") / "coverage.md"
    out.write_text(markdown(rows))
    line = (f"zoo (transformers {VERSION}, {len(rows)} types): "
            + ", ".join(f"{k} {v}" for k, v in c.items() if v)
            + "; forward FLOPs of the exact: " + ", ".join(f"{k} {v}" for k, v in sorted(f.items()))
            + f"; table: {out}")
    print(line)
    return line


def test_table_and_configs_agree(table):
    # the stored configs are the table's: one per type with a config, naming the mapped class
    assert table["transformers"] == VERSION
    files = {p.stem for p in CONFIG_DIR.glob("*.json")}
    assert files <= set(table["types"]), sorted(files - set(table["types"]))
    built = {t for t, e in table["types"].items() if e["params"] is not None}
    assert built <= files, sorted(built - files)
    for t in sorted(files):
        cfg = json.loads((CONFIG_DIR / f"{t}.json").read_text())
        assert cfg["model_type"] == table["types"][t]["config_model_type"]  # gpt-sw3's: gpt2
        assert cfg["architectures"] == [table["types"][t]["class"]]


def test_table_covers_the_pinned_mapping(table):
    # the table lists exactly the pinned release's causal-LM types and classes
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    assert transformers.__version__ == VERSION, (
        f"transformers {transformers.__version__} installed, the zoo table is of {VERSION}: "
        f"rerun tests/oracles/zoo_build.py (writes {table_path(transformers.__version__).name})")
    assert {t: e["class"] for t, e in table["types"].items()} == dict(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)


def test_every_type_exact_or_refused(rows, tmp_path_factory):
    summary = _report(rows, tmp_path_factory)
    bad = [r for r in rows if r.status in ("wrong", "crash")]
    assert not bad, summary + "\n" + markdown(bad)
    stale = [r.model_type for r in rows if r.model_type in KNOWN_WRONG and r.status != "known-wrong"]
    assert not stale, f"no longer wrong, remove from KNOWN_WRONG: {stale}"
    refused = [r for r in rows if r.status == "refused"]
    assert all(r.reason and "\n" not in r.reason for r in refused)
    exact = counts(rows)["exact"]
    assert exact >= EXACT_FLOOR, summary + "\n" + markdown([r for r in rows if r.status != "exact"])


def test_forward_flops_of_the_exact_types(rows):
    bad = [r for r in rows if r.flops_status in ("wrong", "crash")]
    assert not bad, markdown(bad)
    assert flops_counts(rows).get("exact", 0) >= FLOPS_EXACT_FLOOR


def test_the_classification_catches_a_wrong_number(table, tmp_path):
    # the measure itself: an oracle off by one parameter or one FLOP is a wrong number; a type
    # symgpt has no reader for is refused with its one line
    from zoo_coverage import classify_one

    fw = {"B": table["forward"]["B"], "T": table["forward"]["T"]}
    llama = {**table["types"]["llama"], **fw}
    assert classify_one("llama", llama).status == "exact"
    assert classify_one("llama", {**llama, "params": llama["params"] + 1}).status == "wrong"
    assert classify_one("llama", {**llama, "flops_forward": llama["flops_forward"] + 1}).flops_status == "wrong"
    (tmp_path / "nonesuch.json").write_text(json.dumps({"model_type": "nonesuch", "hidden_size": 64}))
    row = classify_one("nonesuch", {"class": "NonesuchForCausalLM", "params": 1, **fw}, config_dir=tmp_path)
    assert row.status == "refused" and "nonesuch" in row.reason and "\n" not in row.reason
