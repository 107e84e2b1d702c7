"""Each layer kind of a hybrid is a stack counted in a symbol of its own (``L_ssm_mlp``, ``L_attn``,
``L_lin``, ``L_conv``, ...: ``symgpt.core.flag_symbols.FLAG_SYMBOLS``), bound to the count the
config's layer pattern gives.

Oracles: the layer patterns of the configurations themselves, counted here by hand from their
fields (JambaConfig's periods and offsets, NemotronHConfig's ``layers_block_type``, BambaConfig's
``attn_layer_indices``, ``layer_types`` of the others); the parameter counts of transformers' models
built on the meta device (the zoo table, ``tests/oracles/zoo/``); the parameters of each layer of
tiny CPU models, grouped by its kind; and tiny CPU models rebuilt with the changed layer pattern
(parameters, and FlopCounterMode's forward FLOPs) for ``--set L_...=``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import sympy
import torch
from torch.utils.flop_counter import FlopCounterMode

import symgpt
import transformers
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import CANONICAL
from zoo_coverage import CONFIG_DIR, read_table


def _s(name):
    return CANONICAL[name]


# --- the zoo configurations: the counts bound and the meta-device totals ----------------------

def _jamba(c):
    L, ap, ao, ep, eo = (c[k] for k in ("num_hidden_layers", "attn_layer_period", "attn_layer_offset",
                                         "expert_layer_period", "expert_layer_offset"))
    out = {}
    for i in range(L):
        name = ("L_attn" if i % ap == ao else "L_ssm") + ("_moe" if i % ep == eo and c["num_experts"] > 1 else "_mlp")
        out[name] = out.get(name, 0) + 1
    return out


def _count(values, names):
    out = {}
    for v in values:
        out[names[v]] = out.get(names[v], 0) + 1
    return out


#: model type -> the kind counts its configuration declares, read here from its fields
EXPECTED = {
    "jamba": _jamba,
    "bamba": lambda c: _count(["*" if i in (c["attn_layer_indices"] or ()) else "M"
                               for i in range(c["num_hidden_layers"])], {"*": "L_attn_mlp", "M": "L_ssm_mlp"}),
    "nemotron_h": lambda c: _count(c["layers_block_type"], {"linear_attention": "L_ssm", "full_attention": "L_attn",
                                                            "mlp": "L_mlp", "moe": "L_moe"}),
    "granitemoehybrid": lambda c: _count(c["layer_types"], {
        "mamba": "L_ssm_moe", "linear_attention": "L_ssm_moe", "attention": "L_attn_moe",
        "full_attention": "L_attn_moe"} if c["num_local_experts"] else {
        "mamba": "L_ssm_mlp", "linear_attention": "L_ssm_mlp", "attention": "L_attn_mlp",
        "full_attention": "L_attn_mlp"}),
    "falcon_h1": lambda c: {"L_par_mlp": c["num_hidden_layers"]},
    "qwen3_next": lambda c: {"L_lin": c["layer_types"].count("linear_attention")},
    "kimi_linear": lambda c: {"L_lin": c["layer_types"].count("linear_attention")},
    "minimax": lambda c: {"L_lin": c["layer_types"].count("linear_attention")},
    "zamba2": lambda c: {"L_ssm": c["layers_block_type"].count("linear_attention"),
                         "L_hyb": c["layers_block_type"].count("hybrid")},
}


@pytest.mark.parametrize("model_type", sorted(EXPECTED))
def test_each_kind_is_bound_to_the_configs_count_and_the_total_is_transformers(model_type):
    table = read_table()["types"][model_type]
    cfg = json.loads((CONFIG_DIR / f"{model_type}.json").read_text())
    m = symgpt.load(CONFIG_DIR / f"{model_type}.json")
    expected = EXPECTED[model_type](cfg)
    assert {k: int(v) for k, v in m.sizes.items() if k in expected} == expected
    free = m.params.expr.free_symbols
    assert {_s(k) for k in expected} <= free          # the formula is written in the kinds' counts
    # the counts substituted: the meta-device count of transformers' model
    assert int(m.params.expr.xreplace(m.bindings)) == table["params"]


# --- tiny CPU models: each kind's per-layer parameters, and --set against a rebuilt pattern ----

MAMBA2 = dict(mamba_n_heads=8, mamba_d_head=8, mamba_n_groups=2, mamba_d_state=4, mamba_d_conv=3,
              mamba_chunk_size=4, mamba_expand=2)
TINY = {
    "bamba": ("bamba", "BambaForCausalLM",
              dict(MAMBA2, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=64, attn_layer_indices=[1, 3])),
    "jamba": ("jamba", "JambaForCausalLM",
              dict(hidden_size=32, intermediate_size=24, num_hidden_layers=6, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=64, num_experts=4, num_experts_per_tok=2, attn_layer_period=3,
                   attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1, mamba_d_state=4,
                   mamba_d_conv=3, mamba_dt_rank=5, use_mamba_kernels=False)),
    "nemotron_h": ("nemotron_h", "NemotronHForCausalLM",
                   dict(hidden_size=32, intermediate_size=48, num_attention_heads=4, num_key_value_heads=2,
                        head_dim=16, vocab_size=64, mamba_num_heads=8, mamba_head_dim=6, n_groups=2,
                        ssm_state_size=4, conv_kernel=3, chunk_size=4, n_routed_experts=4, n_group=2,
                        topk_group=1, num_experts_per_tok=2, moe_intermediate_size=24,
                        moe_shared_expert_intermediate_size=20,
                        layers_block_type=["linear_attention", "moe", "full_attention", "mlp", "linear_attention",
                                           "moe"])),
    "qwen3_next": ("qwen3_next", "Qwen3NextForCausalLM",
                   dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=8, linear_num_key_heads=2,
                        linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=6,
                        linear_conv_kernel_dim=3, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                        shared_expert_intermediate_size=12,
                        layer_types=["linear_attention", "full_attention", "linear_attention", "full_attention"])),
    "lfm2": ("lfm2", "Lfm2ForCausalLM",
             dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2, layer_types=["conv", "full_attention", "conv", "full_attention"],
                  conv_L_cache=3, block_multiple_of=32)),
    # two shared blocks dealt round the hybrid layers (use i runs block i mod 2)
    "zamba2": ("zamba2", "Zamba2ForCausalLM",
               dict(hidden_size=16, num_attention_heads=2, n_mamba_heads=4, vocab_size=64, mamba_d_state=4,
                    mamba_d_conv=3, chunk_size=4, mamba_ngroups=2, num_hidden_layers=6, num_mem_blocks=2,
                    layers_block_type=["linear_attention", "hybrid", "hybrid", "linear_attention", "hybrid",
                                       "linear_attention"])),
}

#: per model type: a layer of the config -> the symbol counting its kind
def _kinds_of(model_type, config) -> list[str]:
    if model_type == "jamba":
        return [("L_attn" if i % config.attn_layer_period == config.attn_layer_offset else "L_ssm")
                + ("_moe" if i % config.expert_layer_period == config.expert_layer_offset else "_mlp")
                for i in range(config.num_hidden_layers)]
    if model_type == "bamba":
        return ["L_attn_mlp" if i in config.attn_layer_indices else "L_ssm_mlp" for i in range(config.num_hidden_layers)]
    if model_type == "nemotron_h":
        names = {"linear_attention": "L_ssm", "full_attention": "L_attn", "mlp": "L_mlp", "moe": "L_moe"}
        return [names[t] for t in config.layers_block_type]
    kind = {"qwen3_next": "linear_attention", "lfm2": "conv"}[model_type]
    return ["L_lin" if model_type == "qwen3_next" and t == kind else "L_conv" if t == kind else "L"
            for t in config.layer_types]


def _build(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    klass = getattr(transformers, cls)
    kw = {"experts_implementation": "batched_mm"} if klass._can_set_experts_implementation() else {}
    torch.manual_seed(0)
    return config, klass._from_config(config, attn_implementation="eager", **kw).eval()


def _load(config, tmp_path, **overrides):
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    return symgpt.load(str(path), **overrides)


@pytest.mark.parametrize("case", sorted(set(TINY) - {"zamba2"}))  # (Zamba2's layers share weights)
def test_each_kinds_formula_is_its_layers_parameters(case, tmp_path):
    """The formula's coefficient of each kind's count is the parameters of one layer of that kind
    in transformers' model (for L - L_lin and L - L_conv: the attention layer's under L, the
    difference of the two kinds under L_lin / L_conv)."""
    config, model = _build(*TINY[case])
    m = _load(config, tmp_path)
    per = {}
    for layer, kind in zip(model.model.layers, _kinds_of(case, config)):
        n = sum(p.numel() for p in layer.parameters())
        assert per.setdefault(kind, n) == n           # every layer of one kind alike
    expr = m.params.expr
    for kind, n in per.items():
        coeff = sympy.diff(expr, _s(kind)).xreplace(m.bindings)
        if "L" in per and kind != "L":                # L - L_lin attention layers beside L_lin others
            n -= per["L"]
        assert coeff == n, kind
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())


#: case -> (the symbol set, its new value, transformers' fields for the changed pattern)
SETS = {
    "bamba": ("L_attn_mlp", 3, dict(num_hidden_layers=5, attn_layer_indices=[1, 3, 4])),
    "nemotron_h": ("L_moe", 3, dict(layers_block_type=["linear_attention", "moe", "full_attention", "mlp",
                                                       "linear_attention", "moe", "moe"])),
    # 6 layers (attention every 3rd from 1, experts every 2nd from 1: M-, *E, M-, ME, *-, ME) with two
    # more M- layers: attention every 5th from 1, experts every 3rd from 1 over 8 layers
    "jamba": ("L_ssm_mlp", 4, dict(num_hidden_layers=8, attn_layer_period=5, attn_layer_offset=1,
                                   expert_layer_period=3, expert_layer_offset=1)),
    # L stays: one attention layer becomes a linear-attention (a short-convolution) layer
    "qwen3_next": ("L_lin", 3, dict(layer_types=["linear_attention", "full_attention", "linear_attention",
                                                  "linear_attention"])),
    "lfm2": ("L_conv", 3, dict(layer_types=["conv", "full_attention", "conv", "conv"])),
    "zamba2": ("L_hyb", 4, dict(num_hidden_layers=7, layers_block_type=["linear_attention", "hybrid", "hybrid",
                                                                         "linear_attention", "hybrid",
                                                                         "linear_attention", "hybrid"])),
}


@pytest.mark.parametrize("case", sorted(SETS))
def test_setting_a_kinds_count_is_transformers_with_that_pattern(case, tmp_path):
    name, value, fields = SETS[case]
    model_type, cls, overrides = TINY[case]
    config, _ = _build(*TINY[case])
    changed, model = _build(model_type, cls, {**overrides, **fields})
    Bn, T = 1, 6
    m = _load(config, tmp_path, **{name: value}, B=Bn, T=T)
    assert int(m.sizes[name]) == value
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, 64, (Bn, T))
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False)
    assert int(m.quantity("flops.forward").value) == int(fcm.get_total_flops())


# --- refusals, the command line ---------------------------------------------------------------

@pytest.mark.parametrize("model,setting,words", [
    ("gemma-2-9b", "L_attn=3", "fixed interleave (full_every=2: one layer in every 2 is full-attention)"),
    ("gpt2-small", "L_ssm=3", "its layers are all of one kind, L of them"),
    ("deepseek-v3", "L_moe=58", "its stacks are dense_blocks × 3, blocks × L - 3"),
    ("jamba-1.5-mini", "L_attn_mlp=0", "must be a positive integer"),
    ("jamba-1.5-mini", "L_attn_mlp=5 --set attention_mlp_layers=5", "set only one of them"),
])
def test_a_count_that_is_not_the_models_refuses_in_one_line(model, setting, words):
    args = [a for part in setting.split(" --set ") for a in ("--set", part)]
    r = subprocess.run([sys.executable, "-m", "symgpt", "params", model, *args], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("symgpt: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert words in r.stderr


def test_params_of_jamba_shows_each_kinds_symbol():
    r = subprocess.run([sys.executable, "-m", "symgpt", "params", "jamba-1.5-mini"], capture_output=True, text=True,
                       check=True)
    formula = r.stdout.split("params (parameters)")[1].split(" = ")[0]
    for name in ("L_ssm_mlp", "L_ssm_moe", "L_attn_mlp"):
        assert name in formula
    assert "51,570,323,328" in r.stdout              # the preset's published-config count (tests/test_zoo.py)
    assert "L_ssm_mlp=12  L_ssm_moe=16  L_attn_mlp=4" in r.stdout


def test_pipeline_stages_hold_whole_layers_of_each_kind():
    """pp must divide every kind's count (12 Mamba layers with an MLP in Jamba-1.5-Mini: pp = 8 refuses,
    pp = 4 splits each stack in four)."""
    m = symgpt.load("jamba-1.5-mini", B=1, T=2048)
    with pytest.raises(SymgptError, match="pp·vp = 8 must divide the 12 layers of mamba_mlp_layers"):
        m.quantity("memory.total", pp=8)
    one, four = m.quantity("memory.weights").value, m.quantity("memory.weights", pp=4).value
    assert one > four > 0


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "symgpt", *args], capture_output=True, text=True)


def test_a_sweep_over_a_kinds_count_adds_whole_layers():
    """One more attention layer of Jamba-1.5-Mini, by hand from JambaAttention and JambaMLP: Q and
    O d x h·d_head, K and V d x h_kv·d_head, gate, up and down d x d_ff, two RMSNorms of d."""
    d, h, h_kv, dh, ff = 4096, 32, 8, 128, 14336
    layer = 2 * d * h * dh + 2 * d * h_kv * dh + 3 * d * ff + 2 * d
    r = _cli("sweep", "jamba-1.5-mini", "--grid", "L_attn_mlp=4:6:1", "--columns", "params", "--no-progress")
    assert r.returncode == 0, r.stderr
    rows = [line.split(",") for line in r.stdout.splitlines()[1:]]
    assert [(int(n), int(p)) for n, p in rows] == [(4, 51_570_323_328), (5, 51_570_323_328 + layer),
                                                   (6, 51_570_323_328 + 2 * layer)]


@pytest.mark.parametrize("args", [
    ("sweep", "zamba2-2.7b", "--grid", "L_hyb=8:10:1", "--columns", "params"),
    ("rule", "zamba2-2.7b", "params", "--as", "L_hyb"),
    ("sweep", "gpt2-small", "--grid", "L_attn=3:5:1", "--columns", "params"),
    ("dominance", "gpt2-small", "params", "--as", "d,L_ssm"),
])
def test_growing_a_count_no_stack_is_counted_in_refuses(args):
    """Zamba2's hybrid layers dealt round two shared blocks keep integer counts per block, and
    GPT-2 has no attention-layer count: a grid or a growth over them would change nothing."""
    r = _cli(*args)
    assert r.returncode == 2 and r.stderr.startswith("symgpt: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert ("counts no stack of the formula" in r.stderr) or ("is not a count of this model" in r.stderr)
