"""``symgpt crossover MODEL QUANTITY --against-model MODEL_B --as T`` (``query.crossmodels``): the
context length from which one model's decode step is the cheaper, solved exactly; checked, with
no use of the solver, by loading both models at T - 1 and at T and comparing the two exact values
(a Mamba config against Transformers of about its size; gpt2-small's threshold lies past its
T_max, which the command line notes), and ``dominance`` on a hybrid: the
attention layers' terms grow with T (quadratic in a prefill, linear in a decode step), the
recurrent layers' do not."""

import json
import subprocess
import sys

import pytest
import sympy

import symgpt
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import T
from symgpt.query.crossmodels import crossover_models

MAMBA = "examples/mamba-config.json"
HYBRID = "examples/qwen3-next-config.json"


def _value(model, name, n, **options):
    """The quantity of *model* (B = 1) evaluated at T = n: exact, independent of any solver (the
    model's expression with its bindings and T = n substituted; past a learned position table's
    T_max the model refuses to load at that T, the expression is still where the curves run)."""
    q = symgpt.load(model, B=1).quantity(name, **options)
    v = q.expr.subs({**q.bindings, T: n})
    assert v.is_Rational
    return v


@pytest.mark.parametrize("other,name,options", [
    ("gpt2-small", "inference.decode.time", {"hardware": "h100-sxm"}),
    ("pythia-160m", "inference.decode.flops", {}),
    ("opt-125m", "inference.decode.bytes", {}),
])
def test_the_threshold_is_where_the_cheaper_model_turns(other, name, options):
    a, b = symgpt.load(MAMBA, B=1), symgpt.load(other, B=1)
    c = crossover_models(a.quantity(name, **options), b.quantity(name, **options), "T", a.name, b.name)
    assert c.cheaper == a.name and c.threshold is not None and c.threshold > 1
    n = c.threshold
    # at T = n the Mamba model's step is the cheaper; at T = n - 1 it is not
    assert _value(MAMBA, name, n, **options) < _value(other, name, n, **options)
    assert _value(MAMBA, name, n - 1, **options) >= _value(other, name, n - 1, **options)
    # and it stays the cheaper: the Mamba step is constant in T, the Transformer's grows
    assert not c.a.has(T) and c.b.has(T)
    far = 8 * n
    assert _value(MAMBA, name, far, **options) < _value(other, name, far, **options)
    assert [(k, x, y) for k, x, y in c.checks] == [(n - 1, c.a.subs(T, n - 1), c.b.subs(T, n - 1)),
                                                  (n, c.a.subs(T, n), c.b.subs(T, n))]


def test_a_hand_worked_crossing_of_two_lines():
    """FLOPs of a decode step: Mamba's constant against a Transformer's a·T + b cross at
    (mamba - b) / a, a rational; the threshold is the first whole T past it."""
    a, b = symgpt.load(MAMBA, B=1), symgpt.load("pythia-160m", B=1)
    qa, qb = a.quantity("inference.decode.flops"), b.quantity("inference.decode.flops")
    mamba = qa.expr.subs(qa.bindings)
    line = sympy.Poly(qb.expr.subs({k: v for k, v in qb.bindings.items() if k != T}), T)
    slope, const = line.all_coeffs()
    c = crossover_models(qa, qb, "T", a.name, b.name)
    assert c.solution == sympy.Rational(mamba - const, slope)
    assert c.threshold == sympy.floor(c.solution) + 1


def test_no_crossing_names_the_cheaper_model():
    a, b = symgpt.load(HYBRID, B=1), symgpt.load("llama-3.1-70b-instruct", B=1)
    name = "inference.decode.time"
    c = crossover_models(a.quantity(name, hardware="h100-sxm"), b.quantity(name, hardware="h100-sxm"), "T",
                         a.name, b.name)
    assert c.solution is None and c.cheaper == a.name and c.threshold == 1
    assert _value(HYBRID, name, 1, hardware="h100-sxm") < _value("llama-3.1-70b-instruct", name, 1,
                                                                 hardware="h100-sxm")


def test_refusals_are_one_line():
    a, b = symgpt.load(MAMBA), symgpt.load("gpt2-small")
    with pytest.raises(SymgptError, match="unbound: B, BW_mem, F_peak") as exc:
        crossover_models(a.quantity("inference.decode.time"), b.quantity("inference.decode.time"), "T", "a", "b")
    assert "\n" not in str(exc.value)
    with pytest.raises(SymgptError, match="one quantity"):
        crossover_models(a.quantity("params"), b.quantity("flops.forward"), "T", "a", "b")


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "symgpt", *argv], capture_output=True, text=True)


def test_the_command_line():
    base = ("crossover", MAMBA, "inference.decode.flops", "--against-model", "pythia-160m", "--as", "T",
            "--set", "B=1")
    r = _cli(*base, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    c = crossover_models(symgpt.load(MAMBA, B=1).quantity("inference.decode.flops"),
                         symgpt.load("pythia-160m", B=1).quantity("inference.decode.flops"), "T", "a", "b")
    assert out["threshold"] == c.threshold and out["cheaper"] == "mamba-config"
    r = _cli(*base)
    assert r.returncode == 0 and f"from T = {c.threshold} on, mamba-config's is the smaller" in r.stdout
    r = _cli(*base, "--part", "lm_head")
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error:") and r.stderr.count("\n") == 1
    assert "--against-model" in _cli("crossover", "--help").stdout


@pytest.mark.parametrize("name,attention,recurrent", [("inference.prefill.flops", 2, 1),
                                                      ("inference.decode.flops", 1, 0)])
def test_dominance_on_a_hybrid_separates_attention_from_the_recurrent_layers(name, attention, recurrent):
    from symgpt.query import dominance

    m = symgpt.load(HYBRID, B=1)
    d = dominance(m.quantity(name), "T")
    parts = dict(m.quantity(name).breakdown)
    order = lambda e: sympy.degree(sympy.expand(e).replace(sympy.ceiling, lambda x: x), T)  # noqa: E731
    attn = [p for p in parts if p.startswith("blocks/attention/scores")]
    delta = [p for p in parts if p.endswith("delta_rule")]
    assert attn and all(order(parts[p]) == attention for p in attn)
    assert all(order(parts[p]) <= recurrent for p in delta)
    assert d.terms[0].order == attention and sympy.degree(sympy.expand(d.terms[0].expr), T) == attention
