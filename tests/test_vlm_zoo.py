"""symgpt against every image-text-to-text and speech-seq2seq type transformers 5.24.0 ships.

Oracle: ``tests/oracles/vlm_zoo/transformers-5.24.0.json``, written once by
``tests/oracles/vlm_zoo_build.py`` from transformers itself -- for each ``model_type`` of
``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES`` and ``MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES``,
the mapped class built from the default configuration on the meta device:
``sum(p.numel() for p in model.parameters())``. The configurations are
``tests/configs/vlm_zoo/<model_type>.json`` (``config.to_json_string(use_diff=False)``, with
``architectures`` naming the class). The test reads the table and builds no torch model.

Each type is exact, refused (one ``SymgptError`` line), wrong or a crash; a wrong number or a
crash fails the test, and the exact count may only grow (``EXACT_FLOOR``). The coverage (exact
of the types transformers itself builds) is printed in one line.
"""
from __future__ import annotations

import json

import pytest

from vlm_zoo_coverage import CONFIG_DIR, MAPPINGS, VERSION, classify, classify_one, counts, coverage, markdown, \
    read_table, table_path

#: types whose exact parameter count symgpt reaches today; raise it as readers land, never lower it
EXACT_FLOOR = 62
# vision--language models, second wave: LFM3-VL, Granite-Docling, GIT, Florence-2, UDOP
EXACT_FLOOR += 5
# Cosmos 3: cosmos3_omni read as Qwen3-VL, cosmos3_edge an Arcee decoder beside a held SigLIP tower
EXACT_FLOOR += 2
# speech models with a held audio tower: Qwen3-ASR, Granite Speech, Granite Speech Plus
EXACT_FLOOR += 3
# speech encoder--decoders with a held speech encoder: SpeechT5 (speech to text), Canary, Cohere ASR,
# SpeechEncoderDecoderModel (wav2vec 2.0 + BERT), SeamlessM4T and SeamlessM4T v2 (speech to text)
EXACT_FLOOR += 6
# Voxtral Realtime: its time-conditioned decoder counted, its streaming audio tower held
EXACT_FLOOR += 1
# VibeVoice-ASR and VibeVoice: speech tokenizers (and a diffusion head) held beside a Qwen2 decoder
EXACT_FLOOR += 2
# Kyutai speech-to-text: text and codebook tokens summed, the Mimi codec held
EXACT_FLOOR += 1
# a decoder with held vision or protein modules (families/vlm_held.py, kosmos2_5.py, pp_formulanet.py,
# t5gemma2.py): Molmo2, IDEFICS, Evolla, Kosmos-2.5, PP-FormulaNet, T5Gemma 2 (IDEFICS, PP-FormulaNet and
# T5Gemma 2 in parameters only: their forwards are refused)
EXACT_FLOOR += 6
# a decoder of another family beside a held tower: Ovis2, OmniASR, Fun-ASR-Nano, Nemotron 3 Nano Omni, Janus
EXACT_FLOOR += 5
# more decoders beside a held vision tower (tests/test_vlm_held_moe.py): MiniMax-M3-VL, Step3p7, ERNIE 4.5 VL MoE,
# Unlimited-OCR
EXACT_FLOOR += 4


@pytest.fixture(scope="module")
def table():
    return read_table()


@pytest.fixture(scope="module")
def rows(table):
    return classify(table)


def test_table_and_configs_agree(table):
    assert table["transformers"] == VERSION
    files = {p.stem for p in CONFIG_DIR.glob("*.json")}
    assert files <= set(table["types"]), sorted(files - set(table["types"]))
    built = {t for t, e in table["types"].items() if e["params"] is not None}
    assert built <= files, sorted(built - files)
    for t in sorted(files):
        cfg = json.loads((CONFIG_DIR / f"{t}.json").read_text())
        assert cfg["model_type"] == table["types"][t]["config_model_type"]
        assert cfg["architectures"] == [table["types"][t]["class"]]


def test_table_covers_the_pinned_mappings(table):
    import transformers
    from transformers.models.auto import modeling_auto

    assert transformers.__version__ == VERSION, (
        f"transformers {transformers.__version__} installed, the table is of {VERSION}: "
        f"rerun tests/oracles/vlm_zoo_build.py (writes {table_path(transformers.__version__).name})")
    want: dict[str, str] = {}
    for name in MAPPINGS:
        for mt, cls in getattr(modeling_auto, name).items():
            want.setdefault(mt, cls)
    assert {t: e["class"] for t, e in table["types"].items()} == want
    assert {t: e["mapping"] for t, e in table["types"].items()}.keys() == want.keys()


def test_every_type_exact_or_refused(rows, table, tmp_path_factory):
    c = counts(rows)
    exact, built = coverage(rows)
    out = tmp_path_factory.mktemp("vlm_zoo") / "coverage.md"
    out.write_text(markdown(rows, {t: e["mapping"] for t, e in table["types"].items()}))
    summary = (f"image-text-to-text + speech-seq2seq (transformers {VERSION}, {len(rows)} types, {built} built): "
               + ", ".join(f"{k} {v}" for k, v in c.items() if v)
               + f"; coverage {exact}/{built} = {100 * exact / built:.1f} %; table: {out}")
    print(summary)
    bad = [r for r in rows if r.status in ("wrong", "known-wrong", "crash")]
    assert not bad, summary + "\n" + markdown(bad)
    refused = [r for r in rows if r.status == "refused"]
    assert all(r.reason and "\n" not in r.reason for r in refused)
    assert exact >= EXACT_FLOOR, summary + "\n" + markdown([r for r in rows if r.status != "exact"])


def test_the_classification_catches_a_wrong_number(table, tmp_path):
    # the measure itself: an oracle off by one parameter is a wrong number; an unknown type is refused
    e = {**table["types"]["llava"], "flops_forward": None}
    assert classify_one("llava", e).status == "exact"
    assert classify_one("llava", {**e, "params": e["params"] + 1}).status == "wrong"
    (tmp_path / "nonesuch.json").write_text(json.dumps({"model_type": "nonesuch", "hidden_size": 64}))
    row = classify_one("nonesuch", {"class": "NonesuchForConditionalGeneration", "params": 1}, config_dir=tmp_path)
    assert row.status == "refused" and "nonesuch" in row.reason and "\n" not in row.reason


def test_the_benchmark_page_is_current(rows):
    # benchmarks/VLM_ZOO.md is what benchmarks/vlm_zoo.py writes from today's classification
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("vlm_zoo_bench", root / "benchmarks" / "vlm_zoo.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert (root / "benchmarks" / "VLM_ZOO.md").read_text() == bench.render(VERSION, rows), \
        "benchmarks/VLM_ZOO.md is stale: run python3 benchmarks/vlm_zoo.py"
