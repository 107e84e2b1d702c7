"""Every bad input gets one clear line (what was wrong, what would be right) and
exit 2; absurd but valid sizes are computed exactly and fast. Each case checks the message."""

import json
import time
from pathlib import Path

import pytest

import symgpt
from symgpt.core.errors import SymgptError

from attacks import check_cli, memory_cap, run_cli

ROOT = Path(__file__).resolve().parent.parent
W40 = 1234567890123456789012345678901234567890  # a 40-digit width; divisible by 90


def gpt2_params(L, d, V=50257, T_max=1024):
    """Lecture note 7.3's closed form of a tied GPT-2 (Radford et al. 2019 architecture)."""
    return 12 * L * d * d + 13 * L * d + V * d + T_max * d + 2 * d


# (argv, what the message must say); each is one line on stderr and exit 2
CLI_CASES = [
    # unknown model or preset
    (["params", "gpt9-huge"], "unknown model 'gpt9-huge'"),
    (["params", "gpt2-smal"], "did you mean gpt2-small"),
    (["params", "gpt2-small", "--set", "d=770"], "d must be divisible by h (d=770, h=12)"),
    (["params", "gpt2", "--set", "d=12", "--set", "h=5"], "d must be divisible by h (d=12, h=5)"),
    # zero, negative, fractional sizes
    (["params", "gpt2-small", "--set", "d=0"], "d must be a positive integer, got 0"),
    (["params", "gpt2-small", "--set", "L=-3"], "L must be a positive integer, got -3"),
    (["params", "gpt2-small", "--set", "d=7.5"], "invalid value '7.5': expected an integer or true/false"),
    (["params", "gpt2-small", "--set", "V=1/2"], "expected an integer or true/false"),
    (["shapes", "gpt2-small", "--set", "B=0"], "B must be a positive integer, got 0"),
    (["params", "tests/configs/llama-2-7b.json", "--set", "h=7"], "llama-2-7b: d must be divisible by h (d=4096, h=7)"),
    (["params", "llama", "--set", "d=10", "--set", "h=3"], "llama: d must be divisible by h (d=10, h=3)"),
    (["params", "mistral-7b", "--set", "h_kv=5"], "h must be a multiple of h_kv (h=32, h_kv=5)"),
    (["params", "mixtral-8x7b", "--set", "k=9"], "k (experts per token) must not exceed E (experts) (E=8, k=9)"),
    # T beyond the learned position table (rotary models have none: T may exceed T_max there)
    (["shapes", "opt-125m", "--set", "T=5000"], "T must not exceed T_max, the length of the learned position table"),
    (["shapes", "gpt2-small", "--set", "T=4096"],
     "T must not exceed T_max, the length of the learned position table (T=4096, T_max=1024)"),
    # unknown --set names, flags, malformed settings
    (["params", "gpt2-small", "--set", "d_model=5"], "unknown setting 'd_model': not a symbol"),
    (["params", "gpt2-small", "--set", "Tied=true"], "nor a flag of gpt2 (tied, qkv_bias, bias"),
    (["params", "gpt2-small", "--set", "tied=3"], "flag tied takes true or false, got 3"),
    (["params", "gpt2-small", "--set", "vocab_multiple=0"], "flag vocab_multiple must be a positive integer, got 0"),
    (["params", "gpt2-small", "--set", "d"], "expected NAME=VALUE, got 'd'"),
    (["params", "gpt2-small", "--set", "d=1", "--set", "d=2"], "--set d given twice"),
    (["params", "gpt2-small", "--bogus"], "unrecognized arguments: --bogus"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["params"], "the following arguments are required: MODEL"),
    # conflicting flags
    (["params", "gpt2-small", "--set", "bias=false", "--set", "qkv_bias=true"],
     "conflicting flags: qkv_bias=true has no effect with bias=false"),
    (["graph", "gpt2", "--unroll"], "its repeat count L is not bound"),
    (["graph", "gpt2-small", "--unroll", "--set", "L=1000"], "1000 copies is more than 64"),
    # unknown conventions, notation profiles, quantities, columns
    (["flops", "gpt2-small", "--convention", "nope"], "unknown convention 'nope'; known conventions: default"),
    (["latex", "gpt2-small", "--notation", "nope"], "unknown notation 'nope'; built-in: default, megatron"),
    (["table", "gpt2-small", "--columns", "L,nope"], "unknown column 'nope'; columns are symbols"),
    (["rule", "gpt2-small", "flopz", "--as", "d"], "unknown quantity 'flopz'"),
    (["sweep", "gpt2-small", "--grid", "L=1:2:1", "--columns", "nope"], "unknown quantity 'nope' in --columns"),
    (["sweep", "gpt2-small", "--grid", "L=1:2:1", "--where", "nope < 3"], "unknown name 'nope' in condition"),
    (["compare", "gpt2-small", "params", "12*L*d^2 +"], "unexpected end of input in expression"),
    (["compare", "gpt2-small", "params", "12 L"], "expected an operator between"),
    (["rule", "gpt2-small", "params", "--as", "q"], "unknown symbol"),
    (["memory", "gpt2-small", "--tp", "0"], "expected a positive integer, got '0'"),
    (["params", "gpt2-small", "--depth", "x"], "invalid int value: 'x'"),
    (["params", "gpt2-small", "--depth", "-1"], "--depth must be 0 (every op) or a number of path components, got -1"),
    (["params", "gpt2-small", "--depth=--"], "argument --depth: expected one argument"),
    (["dominance", "gpt2-small", "params", "--depth", "-2"], "depth must be a positive number of path components, got -2"),
    (["latex", "gpt2-small", "--what=--"], "argument --what: expected one argument"),
]


@pytest.mark.parametrize("argv,message", CLI_CASES, ids=[" ".join(a) for a, _ in CLI_CASES])
def test_cli_message(argv, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = run_cli(argv)
    check_cli(r, allow=(2,))
    assert message in r.err, r.err


def test_growth_rates_are_bounded():
    """A rate of 6e9 (V grows as d^6000000000) is refused, not expanded into a huge polynomial."""
    for argv in (["rule", "gpt2-small", "params", "--as", "d:6e9"],
                 ["dominance", "gpt2-small", "params", "--as", "d,V:1/6e9"]):
        with memory_cap():
            r = run_cli(argv, seconds=20)
        check_cli(r, allow=(2,))
        assert "rate" in r.err, r.err


def test_tp_must_divide_heads():
    """Tensor parallelism splits the heads: --tp 5 cannot split 12 heads."""
    r = run_cli(["memory", "gpt2-small", "--tp", "5"])
    check_cli(r, allow=(2,))
    assert "tp" in r.err and "12" in r.err and "5" in r.err, r.err


# --- HF config.json files -------------------------------------------------------------------------
CONFIG_CASES = [
    ("malformed.json", '{"model_type": "gpt2", "n_layer": 2', "is not valid JSON: Expecting ',' delimiter (line 1, column"),
    ("array.json", "[1, 2]", "must hold a JSON object, got a JSON array"),
    ("string.json", '"gpt2"', "must hold a JSON object, got a JSON string"),
    ("null.json", "null", "must hold a JSON object, got a JSON null"),
    ("empty.json", "", "is empty"),
    ("blank.json", "  \n ", "is empty"),
    ("latin1.json", b'{"model_type": "gpt2", "x": "\xe9"}', "is not UTF-8 text"),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("no_type.json", '{"n_layer": 2}', "missing field 'model_type' (one of"),
    ("type_int.json", '{"model_type": 3}', "field 'model_type' must be a string"),
    ("wav2vec2.json", '{"model_type": "wav2vec2"}', "unknown model_type 'wav2vec2'; supported:"),
    ("str_width.json", '{"model_type": "gpt2", "n_embd": "768"}', "field 'n_embd' must be an integer, got \"768\""),
    ("frac_layers.json", '{"model_type": "gpt2", "n_layer": 1.5}', "field 'n_layer' must be an integer, got 1.5"),
    ("neg_layers.json", '{"model_type": "gpt2", "n_layer": -1}', "field 'n_layer' must be positive, got -1"),
    ("zero_heads.json", '{"model_type": "gpt2", "n_head": 0}', "field 'n_head' must be positive, got 0"),
    ("bool_layers.json", '{"model_type": "gpt2", "n_layer": true}', "field 'n_layer' must be an integer, got true"),
    ("tie_str.json", '{"model_type": "gpt2", "tie_word_embeddings": "yes"}', "field 'tie_word_embeddings' must be true or false"),
    ("indivisible.json", '{"model_type": "gpt2", "n_embd": 770}', "d must be divisible by h (d=770, h=12)"),
    ("llama_kv.json", '{"model_type": "llama", "num_key_value_heads": "8"}', "field 'num_key_value_heads' must be an integer"),
]


@pytest.mark.parametrize("name,text,message", CONFIG_CASES, ids=[c[0] for c in CONFIG_CASES])
def test_config_message(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    r = run_cli(["params", str(path)])
    check_cli(r, allow=(2,))
    assert message in r.err, r.err
    with pytest.raises(SymgptError, match=None) as e:
        symgpt.load(path)
    assert message in str(e.value)


def test_missing_config_file(tmp_path):
    r = run_cli(["params", str(tmp_path / "nowhere" / "config.json")])
    check_cli(r, allow=(2,))
    assert "no such file:" in r.err and "config.json" in r.err


def test_config_folder_and_device(tmp_path):
    r = run_cli(["params", str(tmp_path) + "/"])
    check_cli(r, allow=(2,))
    assert "is a directory" in r.err
    r = run_cli(["params", "/dev/zero"])
    check_cli(r, allow=(2,))
    assert "is not a regular file (a device)" in r.err  # refused unread


def test_config_with_huge_layer_count_is_fast(tmp_path):
    """A 40-digit layer count is data, not a loop bound."""
    for model_type in ("gpt2", "llama", "qwen2", "mistral", "gpt_neox", "opt", "falcon"):
        key = {"gpt2": "n_layer"}.get(model_type, "num_hidden_layers")
        path = tmp_path / f"{model_type}.json"
        path.write_text(json.dumps({"model_type": model_type, key: W40}))
        start = time.perf_counter()
        r = run_cli(["params", str(path), "--json"], seconds=10)
        check_cli(r, allow=(0,))
        assert time.perf_counter() - start < 10, model_type
        assert json.loads(r.out)["params"]["value"] > W40


# --- absurd but valid sizes ---------------------------------------------------------------------
def test_forty_digit_width_is_exact_and_fast():
    start = time.perf_counter()
    r = run_cli(["params", "gpt2-small", "--set", f"d={W40}", "--set", "h=90", "--json"])
    check_cli(r, allow=(0,))
    assert json.loads(r.out)["params"]["value"] == gpt2_params(12, W40)
    r = run_cli(["shapes", "gpt2-small", "--set", f"d={W40}", "--set", "h=90", "--set", "B=" + "9" * 30,
                 "--set", "T=1024", "--json"])
    check_cli(r, allow=(0,))
    shapes = {t["name"]: t["shape"] for t in json.loads(r.out)["tensors"]}
    assert shapes["blocks/attention/q_heads"] == [10**30 - 1, 90, 1024, W40 // 90]
    assert time.perf_counter() - start < 10


def test_forty_digit_width_through_the_api():
    m = symgpt.load("gpt2-small", d=W40, h=90, L=10**12)
    assert m.params.value == gpt2_params(10**12, W40)
    assert m.params == sum(v for v in m.params.values().values())


# --- the API: same checks, SymgptError with the same words ---------------------------------------
API_CASES = [
    (lambda: symgpt.load("gpt9-huge"), "unknown model 'gpt9-huge'"),
    (lambda: symgpt.load(42), "got int"),
    (lambda: symgpt.load(None), "got NoneType"),
    (lambda: symgpt.load("gpt2-small", d=0), "d must be a positive integer, got 0"),
    (lambda: symgpt.load("gpt2-small", d=1.5), "d must be a positive integer, got 1.5"),
    (lambda: symgpt.load("gpt2-small", d="768"), "d must be a positive integer, got '768'"),
    (lambda: symgpt.load("gpt2-small", d=True), "d must be a positive integer, got True"),
    (lambda: symgpt.load("gpt2-small", tied="no"), "flag tied takes true or false, got 'no'"),
    (lambda: symgpt.load("gpt2-small", width=5), "unknown setting 'width'"),
    (lambda: symgpt.load(ROOT / "tests/configs/gpt2.json", path=1), "unknown setting 'path'"),
    (lambda: symgpt.load(ROOT / "tests/configs/gpt2.json", name="x"), "unknown setting 'name'"),
    (lambda: symgpt.load("gpt2-small", model="x"), "unknown setting 'model'"),
    (lambda: symgpt.load("gpt2-small").with_(self=1), "unknown setting 'self'"),
    (lambda: symgpt.load("gpt2-small", bias=False, qkv_bias=True), "conflicting flags"),
    (lambda: symgpt.load("gpt2-small", bias=False).with_(qkv_bias=True), "conflicting flags"),
    (lambda: symgpt.load("gpt2-small").with_(d=770), "d must be divisible by h"),
    (lambda: symgpt.load("gpt2-small").shapes(T=2048), "T must not exceed T_max"),
    (lambda: symgpt.load("gpt2-small").quantity("flopz"), "unknown quantity 'flopz'"),
    (lambda: symgpt.load("gpt2-small").quantity("params", convention="x"), "params takes no options"),
    (lambda: symgpt.load("gpt2-small").quantity("flops.forward", convention="nope"), "unknown convention 'nope'"),
    (lambda: symgpt.load("gpt2-small").params.part("nope"), "params has no part 'nope'"),
    (lambda: symgpt.load("gpt2-small").params["nope"], "params has no breakdown entry 'nope'"),
    (lambda: symgpt.load("gpt2").params.at(d=-1), "d must be a positive integer, got -1"),
    (lambda: symgpt.load("gpt2").params.at(q=1), "unknown symbol 'q'"),
    (lambda: int(symgpt.load("gpt2").params), "params has no integer value"),
]


@pytest.mark.parametrize("call,message", API_CASES, ids=[m for _, m in API_CASES])
def test_api_message(call, message):
    with pytest.raises(SymgptError) as e:
        call()
    assert message in str(e.value)


def test_bias_false_alone_and_consistent_pairs_are_fine():
    assert symgpt.load("gpt2-small", bias=False).params == 124_337_664
    assert symgpt.load("gpt2-small", bias=False, qkv_bias=False).params == 124_337_664
    assert symgpt.load("gpt2-small", qkv_bias=True).params == 124_439_808
