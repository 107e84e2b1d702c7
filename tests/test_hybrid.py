"""Hybrid state-space/attention models (``symgpt.families.hybrid``: transformers' BambaForCausalLM,
NemotronHForCausalLM, GraniteMoeHybridForCausalLM, JambaForCausalLM) against PyTorch: parameters of
the real modules and forward FLOPs against ``torch.utils.flop_counter.FlopCounterMode`` on tiny CPU
models with every layer kind the pattern allows (attention layers among Mamba layers, experts
every m layers) and sequences past one chunk of the chunked scan; the inference answers name the
recurrent state."""

import json

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt.core.errors import SymgptError

import transformers


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        fn()
    return int(fcm.get_total_flops())


MAMBA2 = dict(mamba_n_heads=8, mamba_d_head=8, mamba_n_groups=2, mamba_d_state=4, mamba_d_conv=3,
              mamba_chunk_size=4, mamba_expand=2)

CASES = {
    "bamba": ("bamba", "BambaForCausalLM",
              dict(MAMBA2, hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=64, attn_layer_indices=[1, 3])),
    "bamba-bias-tied": ("bamba", "BambaForCausalLM",
                        dict(MAMBA2, hidden_size=32, intermediate_size=48, num_hidden_layers=3,
                             num_attention_heads=4, num_key_value_heads=4, vocab_size=64, attn_layer_indices=[0],
                             attention_bias=True, mlp_bias=True, mamba_proj_bias=True, mamba_conv_bias=False,
                             tie_word_embeddings=True, mamba_n_groups=1)),
    "falcon_h1": ("falcon_h1", "FalconH1ForCausalLM",
                  dict(MAMBA2, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, vocab_size=64, mamba_d_ssm=48, mamba_n_heads=8, mamba_d_head=6,
                       embedding_multiplier=2.0, key_multiplier=0.5, ssm_multipliers=[1.0, 2.0, 0.5, 0.5, 1.5],
                       mlp_multipliers=[0.5, 2.0], lm_head_multiplier=0.25)),
    "falcon_h1-norm-bias": ("falcon_h1", "FalconH1ForCausalLM",
                            dict(MAMBA2, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=4, vocab_size=64, mamba_d_ssm=None,
                                 mamba_rms_norm=True, mamba_norm_before_gate=False, projectors_bias=True,
                                 attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                  "partial_rotary_factor": 0.5})),
    "granitemoehybrid": ("granitemoehybrid", "GraniteMoeHybridForCausalLM",
                         dict(MAMBA2, hidden_size=32, intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
                              num_key_value_heads=2, vocab_size=64, num_local_experts=4, num_experts_per_tok=2,
                              shared_intermediate_size=20, position_embedding_type="rope", attention_bias=True,
                              embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0,
                              layer_types=["linear_attention", "attention",
                                           "linear_attention"])),
    "granitemoehybrid-dense": ("granitemoehybrid", "GraniteMoeHybridForCausalLM",
                               dict(MAMBA2, hidden_size=32, intermediate_size=24, num_hidden_layers=2,
                                    num_attention_heads=4, vocab_size=64, num_local_experts=0,
                                    shared_intermediate_size=20, layer_types=["attention", "linear_attention"])),
    "jamba": ("jamba", "JambaForCausalLM",
              dict(hidden_size=32, intermediate_size=24, num_hidden_layers=6, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=64, num_experts=4, num_experts_per_tok=2, attn_layer_period=3,
                   attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1, mamba_d_state=4,
                   mamba_d_conv=3, mamba_dt_rank=5, use_mamba_kernels=False)),
    "jamba-sequential-bias": ("jamba", "JambaForCausalLM",
                              dict(hidden_size=32, intermediate_size=24, num_hidden_layers=4, num_attention_heads=4,
                                   num_key_value_heads=4, vocab_size=64, num_experts=1, attn_layer_period=4, attn_layer_offset=3,
                                   mamba_d_state=4, mamba_d_conv=3, mamba_proj_bias=True, mamba_conv_bias=False,
                                   use_associative_scan=False, use_mamba_kernels=False, tie_word_embeddings=True)),
    "nemotron_h": ("nemotron_h", "NemotronHForCausalLM",
                   dict(hidden_size=32, intermediate_size=48, num_attention_heads=4, num_key_value_heads=2,
                        head_dim=16, vocab_size=64, mamba_num_heads=8, mamba_head_dim=6, n_groups=2,
                        ssm_state_size=4, conv_kernel=3, chunk_size=4, n_routed_experts=4, n_group=2,
                        topk_group=1, num_experts_per_tok=2, moe_intermediate_size=24,
                        moe_shared_expert_intermediate_size=20,
                        layers_block_type=["linear_attention", "moe", "full_attention", "mlp", "linear_attention",
                                           "moe"])),
}


def _model(model_type, cls, overrides):
    config = transformers.AutoConfig.for_model(model_type, **overrides)
    config.architectures = [cls]
    torch.manual_seed(0)
    klass = getattr(transformers, cls)
    # experts as one matmul per (token, chosen expert), which FlopCounterMode counts (zoo_build's choice)
    kw = {"experts_implementation": "batched_mm"} if klass._can_set_experts_implementation() else {}
    model = klass._from_config(config, attn_implementation="eager", **kw).eval()
    return config, model


def _write(config, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    return path


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("T", [5, 10])
def test_model_params_and_forward_flops(case, T, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, model = _model(model_type, cls, overrides)
    path = _write(config, tmp_path)
    Bn = 2
    ids = torch.randint(0, 64, (Bn, T))
    measured = _flops(lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False))
    m = symgpt.load(str(path), B=Bn, T=T)
    assert int(m.params.value) == sum(p.numel() for p in model.parameters())
    assert int(m.quantity("flops.forward").value) == measured


@pytest.mark.parametrize("case", sorted(CASES))
def test_inference_answers_name_the_recurrent_state(case, tmp_path):
    """The inference answers are given (their values: tests/test_recurrent_inference.py), each
    saying that the recurrent layers keep a state, not a KV cache."""
    model_type, cls, overrides = CASES[case]
    config, _ = _model(model_type, cls, overrides)
    m = symgpt.load(str(_write(config, tmp_path)))
    for name in ("inference.kv_cache", "inference.state", "inference.decode.flops", "inference.prefill.flops"):
        assert any("recurrent layers keep a state of fixed size" in n for n in m.quantity(name).notes), name
    assert "attention layers only" in m.quantity("memory.kv_cache").notes[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_layer_kind_is_a_stack(case, tmp_path):
    """The stacks' counts are the pattern's: as many layers of each kind as the config declares."""
    model_type, cls, overrides = CASES[case]
    config, model = _model(model_type, cls, overrides)
    m = symgpt.load(str(_write(config, tmp_path)))
    stacks = {g.name: int(g.repeat.xreplace(m.bindings)) for g in m.arch.groups.values() if g.parent is None}
    kinds = {}
    if model_type == "falcon_h1":
        assert stacks == {"parallel_mlp_layers": config.num_hidden_layers}
        return
    if model_type == "nemotron_h":
        for layer_type in config.layers_block_type:
            name = {"linear_attention": "mamba", "full_attention": "attention"}.get(layer_type, layer_type)
            kinds[name + "_layers"] = kinds.get(name + "_layers", 0) + 1
        assert stacks == kinds
        return
    for layer_type, moe in zip(config.layers_block_type, _experts(config)):
        name = ("mamba" if layer_type in ("mamba", "linear_attention") else "attention") + ("_moe" if moe else "_mlp")
        kinds[name + "_layers"] = kinds.get(name + "_layers", 0) + 1
    assert stacks == kinds


def _experts(config):
    """Per layer, whether its FFN is a mixture of experts (Jamba's expert period; Granite 4.0-H's
    experts in every layer; none in Bamba)."""
    if hasattr(config, "layers_num_experts"):
        return [n > 1 for n in config.layers_num_experts]
    return [bool(getattr(config, "num_local_experts", 0) or 0)] * config.num_hidden_layers


@pytest.mark.parametrize("model_type,fields,words", [
    ("nemotron_h", {"moe_latent_size": 64}, "moe_latent_size"),
    ("nemotron_h", {"mamba_hidden_act": "gelu"}, "mamba_hidden_act"),
    ("nemotron_h", {"hybrid_override_pattern": "M*X"}, "hybrid_override_pattern"),
    ("falcon_h1", {"mamba_rms_norm": True, "mamba_norm_before_gate": True}, "mamba_norm_before_gate"),
    ("granitemoehybrid", {"hidden_act": "gelu"}, "hidden_act"),
    ("granitemoehybrid", {"position_embedding_type": "alibi"}, "position_embedding_type"),
    ("jamba", {"attn_layer_offset": 8}, "offset"),
    ("bamba", {"mamba_n_heads": 100}, "mamba_n_heads"),
])
def test_readers_refuse_what_they_do_not_model_in_one_line(model_type, fields, words, tmp_path):
    """Shapes the hybrids' readers do not model are refused, each in one line naming the field
    (transformers' own checks, NemotronH's latent expert projections, Falcon-H1's norm before the
    gate, a Mamba mixer whose convolution activation is not silu)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, **fields}))
    with pytest.raises(SymgptError, match=words) as exc:
        symgpt.load(str(path))
    assert "\n" not in str(exc.value)
