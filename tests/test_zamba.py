"""Zamba and Zamba2 (``symgpt.families.zamba``: transformers' ZambaForCausalLM, Zamba2ForCausalLM)
against PyTorch on tiny CPU models: the parameters of the real modules (``sum(p.numel())`` over
``model.parameters()``, where the shared blocks' tied copies appear once), forward FLOPs against
``torch.utils.flop_counter.FlopCounterMode`` (meta-device forwards of these classes fail on a
``.item()``, so the zoo table has no FLOPs for them), with one and several shared blocks, per-use
LoRA adapters, RoPE, biases and sequences past one chunk of the chunked scan. The shared-weight
mechanism itself (``Builder.shares``) is checked on a hand-built graph: the weights count once,
the FLOPs at every use."""

import json

import pytest
import torch

import symgpt
from symgpt.core.errors import SymgptError

import test_hybrid as hybrid  # noqa: E402

_ZAMBA = dict(hidden_size=16, intermediate_size=24, num_attention_heads=2, num_key_value_heads=2, n_mamba_heads=2,
              vocab_size=64, mamba_d_state=4, mamba_d_conv=3)
_ZAMBA2 = dict(hidden_size=16, num_attention_heads=2, n_mamba_heads=4, vocab_size=64, mamba_d_state=4,
               mamba_d_conv=3, chunk_size=4, mamba_ngroups=2)
_L6 = ["linear_attention", "hybrid", "hybrid", "linear_attention", "hybrid", "linear_attention"]

CASES = {
    # the default pattern: Mamba, Mamba, hybrid, then hybrid every attn_layer_period
    "zamba": ("zamba", "ZambaForCausalLM", dict(_ZAMBA, num_hidden_layers=7, attn_layer_period=2,
                                                attn_layer_offset=1)),
    "zamba-gqa-heads-bias": ("zamba", "ZambaForCausalLM",
                             dict(_ZAMBA, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                                  attention_head_dim=6, mamba_dt_rank=3, mamba_proj_bias=True,
                                  mamba_conv_bias=False, hidden_act="silu",
                                  layers_block_type=["hybrid", "linear_attention", "hybrid", "hybrid"])),
    "zamba2": ("zamba2", "Zamba2ForCausalLM", dict(_ZAMBA2, num_hidden_layers=6, layers_block_type=_L6)),
    "zamba2-blocks-adapters-rope": ("zamba2", "Zamba2ForCausalLM",
                                    dict(_ZAMBA2, num_hidden_layers=6, layers_block_type=_L6, num_mem_blocks=2,
                                         use_shared_attention_adapter=True, adapter_rank=3, use_mem_rope=True)),
    "zamba2-three-blocks-bias": ("zamba2", "Zamba2ForCausalLM",
                                 dict(_ZAMBA2, num_hidden_layers=7, num_mem_blocks=3, add_bias_linear=True,
                                      intermediate_size=40, num_key_value_heads=1,
                                      layers_block_type=["hybrid"] * 5 + ["linear_attention"] * 2)),
}


def _write(config, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    return path


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [5, 10])
def test_model_params_and_forward_flops(case, T, tmp_path):
    config, model = hybrid._model(*CASES[case])
    Bn = 2
    ids = torch.randint(0, 64, (Bn, T))
    measured = hybrid._flops(lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False))
    m = symgpt.load(str(_write(config, tmp_path)), B=Bn, T=T)
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    assert int(m.quantity("flops.forward").value) == measured


@pytest.mark.parametrize("case", sorted(CASES))
def test_weights_are_stored_once(case, tmp_path):
    """``memory.weights`` holds each shared block once: the bytes of the real model's parameters
    (fp32; the tied copies of a shared block are one tensor in ``model.parameters()``)."""
    config, model = hybrid._model(*CASES[case])
    m = symgpt.load(str(_write(config, tmp_path)))
    stored = sum(p.numel() * p.element_size() for p in model.parameters())
    assert int(m.quantity("memory.weights", precision="fp32").value.subs(m.bindings)) == stored


@pytest.mark.parametrize("case", sorted(CASES))
def test_stacks_follow_the_layer_pattern_and_the_shared_blocks(case, tmp_path):
    """The plain Mamba layers are one stack; the hybrid layers, per shared block, a stack of its
    first use (which owns the block's weights) and one of its later uses (which tie to them):
    hybrid use i runs block i mod num_mem_blocks, as Zamba2Model ties them."""
    config, model = hybrid._model(*CASES[case])
    m = symgpt.load(str(_write(config, tmp_path)))
    stacks = {g.name: int(g.repeat.xreplace(m.bindings)) for g in m.arch.stacks()}
    kinds = config.layers_block_type
    hybrids = [i for i, k in enumerate(kinds) if k == "hybrid"]
    blocks = getattr(config, "num_mem_blocks", 1)
    expected = {"mamba_layers": kinds.count("linear_attention")} if "linear_attention" in kinds else {}
    for b in range(blocks):
        n = len(hybrids[b::blocks])
        sfx = "" if blocks == 1 else f"_block{b}"
        expected[f"hybrid_first{sfx}"] = 1
        if n > 1:
            expected[f"hybrid_rest{sfx}"] = n - 1
    assert stacks == expected
    # transformers ties each later use's shared block to the first use's: the same tensors
    shared = "shared_transf" if config.model_type == "zamba" else "shared_transformer"
    first = {}
    for pos, i in enumerate(hybrids):
        q = getattr(model.model.layers[i], shared).self_attn.q_proj.weight
        first.setdefault(pos % blocks, q)
        assert q is first[pos % blocks]


@pytest.mark.parametrize("case", sorted(CASES))
def test_inference_answers_name_the_recurrent_state(case, tmp_path):
    """The inference answers are given (their values against transformers' cache:
    tests/test_recurrent_inference.py), each saying that the Mamba layers keep a state."""
    config, _ = hybrid._model(*CASES[case])
    m = symgpt.load(str(_write(config, tmp_path)))
    for name in ("inference.kv_cache", "inference.state", "inference.decode.flops", "inference.prefill.flops"):
        assert any("recurrent layers keep a state of fixed size" in n for n in m.quantity(name).notes), name


def test_a_shared_block_counts_its_weights_once_and_its_flops_at_every_use():
    """``Builder.shares`` on a hand-built graph: a block of one Linear(d, d) with bias, its first
    use a stack of 1 (the owner) and its later uses a stack of 3 tied to it, between an embedding
    and an untied head. By hand: the weights V·d + (d² + d) + (d·V + V); the forward FLOPs of the
    matmuls 4 uses × 2·B·T·d² + the head's 2·B·T·d·V (biases are elementwise, priced 0 by the
    default convention, as FlopCounterMode does)."""
    from types import SimpleNamespace

    from symgpt.core.symbols import B, T, V, d
    from symgpt.derive.flops import forward
    from symgpt.derive.params import params, tied_uses
    from symgpt.graph.arch import Builder
    from symgpt.ops import Embedding, Linear

    g = Builder("shared")
    ids = g.input("input_ids", (B, T))
    x = g.op("embedding/token", Embedding(V, d), ids)
    with g.repeat("first", 1, carry=x):
        x = g.op("block/proj", Linear(d, d), x)
    with g.repeat("rest", 3, carry=x):
        with g.shares("first"):
            x = g.op("block/proj", Linear(d, d), x)
    x = g.op("lm_head", Linear(d, V, bias=False), x)
    arch = g.build(output=x)
    assert sympy_equal(params(arch).expr, V * d + d * d + d + d * V)
    assert sorted(tied_uses(arch)) == [("rest/block/proj", "bias", "first/block/proj.bias"),
                                       ("rest/block/proj", "weight", "first/block/proj.weight")]
    assert params(arch).notes == ("rest runs first's shared block: its 2 parameter tensors are first's (tied), "
                                  "counted once, there; its FLOPs count at every use",)
    fwd = forward(SimpleNamespace(arch=arch, bindings={}))
    assert sympy_equal(fwd.expr, 4 * 2 * B * T * d * d + 2 * B * T * d * V)


def test_a_later_use_must_match_its_owner():
    """A shared op whose owner has no op at the same path, or a differently sized one, is an error."""
    from symgpt.core.symbols import B, T, V, d
    from symgpt.graph.arch import Builder
    from symgpt.ops import Embedding, Linear

    g = Builder("shared")
    x = g.op("embedding/token", Embedding(V, d), g.input("input_ids", (B, T)))
    with g.repeat("first", 1, carry=x):
        x = g.op("block/proj", Linear(d, d), x)
    with g.repeat("rest", 3, carry=x):
        with g.shares("first"):
            with pytest.raises(SymgptError, match="not declared"):
                g.op("block/other", Linear(d, d), x)
            with pytest.raises(SymgptError, match="cannot tie"):
                g.op("block/proj", Linear(d, 2 * d), x)
    with pytest.raises(SymgptError, match="not a declared group"):
        with g.shares("nowhere"):
            pass


def sympy_equal(a, b) -> bool:
    import sympy

    return sympy.expand(a - b) == 0


@pytest.mark.parametrize("case", ["zamba", "zamba2"])
def test_untied_embeddings_are_refused_as_transformers_then_shares_no_block(case, tmp_path):
    """With ``tie_word_embeddings`` false, transformers 5.24 ties none of a model's tied-weight
    keys: each hybrid layer then holds its own copy of the shared block (measured here), which is
    not Zamba's design; symgpt refuses the config in one line rather than count either."""
    model_type, cls, overrides = CASES[case]
    config, model = hybrid._model(model_type, cls, dict(overrides, tie_word_embeddings=False))
    shared = "shared_transf" if model_type == "zamba" else "shared_transformer"
    hybrids = [i for i, k in enumerate(config.layers_block_type) if k == "hybrid"]
    q = [getattr(model.model.layers[i], shared).self_attn.q_proj.weight for i in hybrids]
    assert len(q) > 1 and q[1] is not q[0]
    with pytest.raises(SymgptError, match="tie_word_embeddings false") as exc:
        symgpt.load(str(_write(config, tmp_path)))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("model_type,fields,words", [
    ("zamba", {"hidden_mamba_act": "gelu"}, "hidden_mamba_act"),
    ("zamba", {"attention_hidden_size": 100}, "attention_hidden_size"),
    ("zamba", {"layers_block_type": ["mamba", "attention"]}, "layers_block_type"),
    ("zamba2", {"use_shared_attention_adapter": True, "num_key_value_heads": 8}, "use_shared_attention_adapter"),
    ("zamba2", {"use_mem_rope": True, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                                          "partial_rotary_factor": 0.5}}, "partial rotary"),
    ("zamba2", {"num_mem_blocks": 0}, "num_mem_blocks"),
    ("zamba2", {"n_mamba_heads": 7}, "n_mamba_heads"),
])
def test_readers_refuse_what_they_do_not_model_in_one_line(model_type, fields, words, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, **fields}))
    with pytest.raises(SymgptError, match=words) as exc:
        symgpt.load(str(path))
    assert "\n" not in str(exc.value)


def test_the_zamba2_preset_is_zyphras_published_config(tmp_path):
    """``zamba2-2.7b`` against Zyphra's own config.json of Zamba2-2.7B (tests/configs/zyphra/, the
    standalone implementation's field names; sources in tests/configs/README.md), read into
    transformers' Zamba2Config field by field, with the implementation's MambaConfig defaults for
    the fields the file leaves out (mamba_headdim 64, mamba_ngroups 1, no rotary, no attention
    LoRA; its shared MLP 8·hidden_size wide = 2 × 4·hidden_size, gated): the preset equals what
    symgpt reads from that config, and its count transformers' Zamba2ForCausalLM built from it on
    the meta device."""
    from pathlib import Path

    import transformers

    z = json.loads((Path(__file__).parent / "configs" / "zyphra" / "zamba2-2.7b.json").read_text())
    d = z["hidden_size"]
    config = transformers.Zamba2Config(
        hidden_size=d, num_hidden_layers=z["num_layers"], vocab_size=z["padded_vocab_size"],
        layers_block_type=["hybrid" if c == "g" else "mamba" for c in z["layer_mapping"]],
        mamba_d_state=z["state_size"], mamba_d_conv=z["conv_dimension"], mamba_expand=z["expansion_factor"],
        n_mamba_heads=z["expansion_factor"] * d // 64, mamba_ngroups=1, chunk_size=256,
        add_bias_linear=z["add_bias_linear"], num_attention_heads=z["num_mem_heads"],
        num_key_value_heads=z["num_mem_heads"], num_mem_blocks=z["num_mem_blocks"], adapter_rank=z["lora_rank"],
        use_shared_attention_adapter=False, use_mem_rope=False, intermediate_size=4 * d, hidden_act="gelu",
        tie_word_embeddings=True)
    config.architectures = ["Zamba2ForCausalLM"]
    assert z["use_shared_block_lora"] and z["use_mem_mlp"] and z["kv_channels"] == d // z["num_attention_heads"]
    read = symgpt.load(str(_write(config, tmp_path)))
    preset = symgpt.load("zamba2-2.7b")
    assert preset.family.name == read.family.name == "zamba2"
    assert preset.sizes == read.sizes and preset.flags == read.flags
    with torch.device("meta"):
        model = transformers.Zamba2ForCausalLM(config)
    n = sum(p.numel() for p in model.parameters())
    assert int(preset.params.value) == n
    assert f"{n:,} parameters" in " ".join(preset.notes)
