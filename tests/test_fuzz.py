"""Thousands of generated inputs through the CLI (in process) and the API end
with zero tracebacks, zero internal errors and zero executed payloads. Sized to run in well under
a minute: hypothesis with fixed example counts and no deadline (a 20 s per-call alarm and a
memory cap turn a hang or a runaway computation into a failure instead of a stuck suite)."""

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symgpt
import symgpt.documents.report
import symgpt.documents.reportparts.core
from symgpt.core import exprparse
from symgpt.core.errors import SymgptError

from attacks import (INERT, base_argv, check_api_error, check_cli, code_guard, commands,
                     marker_files, memory_cap, payloads, run_cli)

MARKERS = Path(tempfile.mkdtemp(prefix="symgpt-fuzz-markers-"))
WORDS = ["gpt2-small", "gpt2", "gpt3-1.3b", "params", "flops.forward", "flops.train", "memory.total",
         "d", "L", "T", "h", "V", "B", "T_max", "d_ff", "tied", "bias", "true", "false", "0", "1",
         "-1", "12", "768", "1024", "10**40", "=", ":", ",", "d=768", "T=2048", "B=8", "h=7", "L=0",
         "blocks", "blocks/attention", "lm_head", "12*L*d^2", "d > 1", "params < 1e9", "d:2"]
texts = st.one_of(
    st.sampled_from(WORDS + INERT[:60] + payloads(MARKERS)),
    st.text(max_size=24),
    st.text(alphabet="dLThBV_=:,.0123456789+-*/^()<> e", max_size=24),
    st.integers(-10**45, 10**45).map(str),
)
SLOW = {"check"}  # its base run checks the whole formula library (seconds): fewer examples


@contextmanager
def in_scratch_folder():
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        saved = symgpt.documents.report.REPORT_PARTS
        symgpt.documents.report.REPORT_PARTS = (symgpt.documents.reportparts.core,)
        try:
            yield Path(tmp)
        finally:
            symgpt.documents.report.REPORT_PARTS = saved
            os.chdir(old)


@st.composite
def command_lines(draw):
    name = draw(st.sampled_from(sorted(set(commands()) - SLOW)))
    sub = commands()[name]
    flags = [s for a in sub._actions for s in a.option_strings if s not in ("-h", "--help")]
    argv = base_argv(name) if draw(st.booleans()) else [name]
    tokens = st.one_of(texts, st.sampled_from(flags or ["--json"]))
    extra = draw(st.lists(tokens, max_size=6))
    if extra and flags and draw(st.booleans()):  # an option with a generated value
        extra = [draw(st.sampled_from(flags)), extra[0], *extra[1:]]
    return argv + [e for e in extra if e not in ("-o", "--output")]  # outputs: tests/test_atomic.py


@settings(max_examples=1200, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(command_lines())
def test_fuzz_cli(argv):
    with in_scratch_folder(), code_guard(), memory_cap():
        r = run_cli(argv, seconds=20)
    allow = (0, 1, 2) if argv[0] == "check" else (0, 2)
    check_cli(r, allow=allow)
    assert marker_files(MARKERS) == []


values = st.one_of(texts, st.integers(-10**45, 10**45), st.booleans(), st.none(),
                   st.floats(allow_nan=True), st.just([1]), st.just({"d": 1}))
names = st.one_of(st.sampled_from(["d", "h", "L", "T", "B", "V", "T_max", "d_ff", "tied", "bias",
                                   "qkv_bias", "vocab_multiple", "dropout", "loss", "convention",
                                   "per", "precision"]), texts)


@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["load", "with_", "quantity", "shapes", "at", "part"]),
       st.dictionaries(names, values, max_size=3), texts)
def test_fuzz_api(entry, kwargs, text):
    m = symgpt.load("gpt2-small")
    calls = {
        "load": lambda: symgpt.load(text if kwargs.get("d") is None else "gpt2-small", **kwargs),
        "with_": lambda: m.with_(**kwargs),
        "quantity": lambda: m.quantity(text, **kwargs),
        "shapes": lambda: m.shapes(**kwargs),
        "at": lambda: symgpt.load("gpt2").params.at(**kwargs),
        "part": lambda: m.params.part(text),
    }
    with code_guard(), memory_cap():
        try:
            calls[entry]()
        except SymgptError as e:
            check_api_error(e, entry)
    assert marker_files(MARKERS) == []


@settings(max_examples=1500, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["expression", "condition", "value", "assignment"]),
       st.one_of(texts, st.text(alphabet="()+-*/^²³.e0123456789 dLhT_<=>!", max_size=60)))
def test_fuzz_parsers(kind, text):
    parse = {"expression": exprparse.parse_expression,
             "condition": lambda t: exprparse.parse_condition(t, None),
             "value": exprparse.parse_value, "assignment": exprparse.parse_assignment}[kind]
    with code_guard(), memory_cap():
        try:
            parse(text)
        except SymgptError as e:
            check_api_error(e, kind)


CONFIG_KEYS = ("model_type vocab_size hidden_size intermediate_size num_hidden_layers num_attention_heads "
               "num_key_value_heads head_dim max_position_embeddings tie_word_embeddings hidden_act "
               "sliding_window use_sliding_window max_window_layers layer_types num_local_experts "
               "num_experts_per_tok partial_rotary_factor rope_parameters attention_bias mlp_bias n_embd "
               "n_layer n_head n_positions n_inner activation_function ffn_dim do_layer_norm_before "
               "word_embed_proj_dim multi_query new_decoder_architecture parallel_attn num_kv_heads "
               "alibi bias rotary_pct use_parallel_residual ffn_hidden_size resid_pdrop").split()
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**40, 10**40), st.floats(allow_nan=False),
              st.sampled_from(["gpt2", "llama", "mistral", "mixtral", "qwen2", "gemma", "phi3", "falcon",
                               "gpt_neox", "opt", "silu", "gelu", "relu", "sliding_attention",
                               "full_attention"]), st.text(max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["gpt2", "llama", "mistral", "mixtral", "qwen2", "gemma", "phi3", "falcon",
                        "gpt_neox", "opt"]),
       st.dictionaries(st.sampled_from(CONFIG_KEYS), json_values, max_size=6))
def test_fuzz_config_objects(model_type, fields):
    """Random HF configs (right keys, wild values): a Model or a SymgptError, within seconds."""
    import signal

    from attacks import Hang, _on_alarm
    from symgpt.model.model import from_config as from_dict

    cfg = {"model_type": model_type, **fields}
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 10)
    try:
        with code_guard(), memory_cap():
            m = from_dict(cfg, "fuzz")
            m.params.expr  # noqa: B018  (the derivation must go through too)
    except SymgptError as e:
        check_api_error(e, f"config {cfg}")
    except Hang:
        raise AssertionError(f"config {cfg}: still running after 10 s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
