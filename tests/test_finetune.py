"""LoRA, DoRA and QLoRA (derive.finetune, derive.quantize) against the peft library on tiny
transformers models (CPU): trainable and frozen parameter counts, FlopCounterMode over forward +
backward, the tensors autograd saves; QLoRA's storage against Dettmers et al. 2023's description."""

import json

import pytest
import sympy

import torch
import peft

import symgpt  # noqa: E402
from symgpt.core.errors import SymgptError  # noqa: E402
from symgpt.derive.finetune import FineTune, apply  # noqa: E402

B, T = 2, 16

LLAMA = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
         "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 500,
         "max_position_embeddings": 64, "tie_word_embeddings": False}
GPT2 = {"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 500, "n_positions": 64,
        "tie_word_embeddings": True, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
MIXTRAL = {"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 500, "num_local_experts": 4,
           "num_experts_per_tok": 2, "max_position_embeddings": 64, "tie_word_embeddings": False}

#: target name -> the module names peft matches (by suffix), per model type
MODULES = {
    "llama": {"q": ["q_proj"], "k": ["k_proj"], "v": ["v_proj"], "o": ["o_proj"], "gate": ["gate_proj"],
              "up": ["up_proj"], "down": ["down_proj"]},
    "gpt2": {"q": ["attn.c_attn"], "k": ["attn.c_attn"], "v": ["attn.c_attn"], "o": ["attn.c_proj"],
             "up": ["mlp.c_fc"], "down": ["mlp.c_proj"]},
}
MODULES["mixtral"] = MODULES["llama"]


def _hf(config, targets, r=8, dora=False, dropout=0.0):
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    cfg = dict(config)
    kind = cfg.pop("model_type")
    torch.manual_seed(0)
    extra = {"experts_implementation": "eager"} if "num_local_experts" in cfg else {}  # experts as matmuls
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(kind, **cfg), attn_implementation="eager", **extra)
    model.tie_weights()
    names = sorted({n for t in targets for n in MODULES[kind][t]})
    lora = peft.LoraConfig(r=r, lora_alpha=2 * r, target_modules=names, lora_dropout=dropout, use_dora=dora,
                           fan_in_fan_out=kind == "gpt2")
    return peft.get_peft_model(model, lora)


def _symgpt(config, ft, tmp_path):
    path = tmp_path / f"{config['model_type']}.json"
    path.write_text(json.dumps(config))
    return apply(symgpt.load(path, B=B, T=T), ft)


def _counts(pm):
    trainable = sum(p.numel() for p in pm.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in pm.parameters() if not p.requires_grad)
    return trainable, frozen


CASES = [(LLAMA, ("q", "v")), (LLAMA, ("q", "k", "v", "o", "gate", "up", "down")), (LLAMA, ("o", "down")),
         (GPT2, ("q", "k", "v", "o", "up", "down")), (GPT2, ("o",)), (MIXTRAL, ("q", "k", "v", "o"))]
IDS = ["llama-qv", "llama-all", "llama-o-down", "gpt2-all", "gpt2-o", "mixtral-attention"]


@pytest.mark.parametrize("config,targets", CASES, ids=IDS)
def test_trainable_and_frozen_equal_peft(config, targets, tmp_path):
    pm = _hf(config, targets)
    m = _symgpt(config, FineTune("lora", 8, targets, alpha=16), tmp_path)
    assert (m.quantity("params.trainable").value, m.quantity("params.frozen").value) == _counts(pm)
    # and the closed form: r·(d_in + d_out) per targeted linear, × L
    L, r = 2, 8
    d_in_out = {"q": 64 + 64, "k": 64 + 32, "v": 64 + 32, "o": 64 + 64, "gate": 64 + 96, "up": 64 + 96,
                "down": 96 + 64}
    if config is GPT2:
        d_in_out.update(q=64 + 192, k=0, v=0, up=64 + 256, down=256 + 64)  # c_attn is one fused projection
    assert m.quantity("params.trainable").value == L * r * sum(d_in_out[t] for t in targets)


@pytest.mark.parametrize("config,targets", [(LLAMA, ("q", "v")), (LLAMA, ("q", "k", "v", "o", "gate", "up", "down")),
                                            (GPT2, ("q", "k", "v", "o"))], ids=["llama-qv", "llama-all", "gpt2"])
def test_dora_adds_one_magnitude_per_output(config, targets, tmp_path):
    pm = _hf(config, targets, dora=True)
    m = _symgpt(config, FineTune("dora", 8, targets), tmp_path)
    assert (m.quantity("params.trainable").value, m.quantity("params.frozen").value) == _counts(pm)


DORA_CASES = [(LLAMA, ("q", "v")), (LLAMA, ("q", "k", "v", "o", "gate", "up", "down")),
              (GPT2, ("q", "k", "v", "o")), (GPT2, ("q", "k", "v", "o", "up", "down")),
              (MIXTRAL, ("q", "k", "v", "o"))]
DORA_IDS = ["llama-qv", "llama-all", "gpt2-attention", "gpt2-all", "mixtral-attention"]


@pytest.mark.parametrize("config,targets", DORA_CASES, ids=DORA_IDS)
def test_dora_step_flops_equal_flopcountermode(config, targets, tmp_path):
    # peft builds B·A each forward by running the adapters on an identity matrix, and detaches it:
    # forward work only, no backward
    from oracles.measure import flop_count

    pm = _hf(config, targets, dora=True)
    m = _symgpt(config, FineTune("dora", 8, targets, alpha=16), tmp_path)
    assert m.quantity("flops.forward").value == flop_count(pm, B, T)
    assert m.quantity("flops.train").value == flop_count(pm, B, T, backward=True)


@pytest.mark.parametrize("config,targets", DORA_CASES, ids=DORA_IDS)
def test_dora_retained_activations_equal_saved_tensors_hooks(config, targets, tmp_path):
    from oracles.measure import retained_activation_bytes

    pm = _hf(config, targets, dora=True)
    m = _symgpt(config, FineTune("dora", 8, targets, alpha=16), tmp_path)
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert m.quantity("memory.activations", **opts).value == retained_activation_bytes(pm, B, T)


def test_retained_equals_saved_where_no_graph_is_dropped(tmp_path):
    # the oracle above agrees with saved_activation_bytes on LoRA, where every saved tensor stays
    from oracles.measure import retained_activation_bytes, saved_activation_bytes

    for config, targets in ((LLAMA, ("q", "v")), (GPT2, ("q", "k", "v", "o"))):
        pm = _hf(config, targets)
        assert retained_activation_bytes(pm, B, T) == saved_activation_bytes(pm, B, T, torch.float32)


def test_dora_over_lora_by_hand(tmp_path):
    # Liu et al. 2024 as peft runs it, per adapted layer d_in -> d_out at rank r, N = B·T tokens:
    # forward + 2·(d_in·d_in·r + d_in·r·d_out) FLOPs (lora_B(lora_A(eye(d_in)))), backward + 0;
    # kept (fp32): y (no bias: the base output itself), s·B·A·x, ‖·‖, m/‖·‖ (4·(2·N·d_out + 2·d_out))
    # and m/‖·‖ − 1 (4·d_out) where y needs a gradient (not in layer 0 for q and v: the frozen
    # embeddings feed it). Llama, q (64 -> 64) and v (64 -> 32), L = 2.
    lora = _symgpt(LLAMA, FineTune("lora", 8, ("q", "v"), alpha=16), tmp_path)
    dora = _symgpt(LLAMA, FineTune("dora", 8, ("q", "v"), alpha=16), tmp_path)
    r, N, L = 8, B * T, 2
    layer = 2 * (64 * 64 * r + 64 * r * 64) + 2 * (64 * 64 * r + 64 * r * 32)
    assert dora.quantity("flops.forward").value - lora.quantity("flops.forward").value == L * layer
    assert dora.quantity("flops.backward").value == lora.quantity("flops.backward").value
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    kept = sum(4 * (2 * N * d + 2 * d) for d in (64, 32))
    minus_one = 4 * (64 + 32)
    assert dora.quantity("memory.activations", **opts).value - lora.quantity("memory.activations", **opts).value \
        == L * kept + (L - 1) * minus_one
    # the magnitudes' gradients and AdamW states: d_out more trainable parameters per layer
    extra = L * (64 + 32)
    assert dora.quantity("memory.gradients", precision="fp32").value \
        - lora.quantity("memory.gradients", precision="fp32").value == 4 * extra


DORA_DROPOUT = [(LLAMA, ("q", "v")), (LLAMA, ("q", "k", "v", "o", "gate", "up", "down")), (GPT2, ("o",)),
                (GPT2, ("q", "k", "v", "o", "up", "down"))]


@pytest.mark.parametrize("config,targets", DORA_DROPOUT, ids=["llama-qv", "llama-all", "gpt2-o", "gpt2-all"])
def test_dora_with_dropout_equals_peft(config, targets, tmp_path):
    # with lora_dropout peft runs the base layer again on the dropped input (GPT-2's Conv1D: on a
    # fresh nn.Parameter of Wᵀ, which autograd gives a weight gradient)
    from oracles.measure import flop_count, retained_activation_bytes

    pm = _hf(config, targets, dora=True, dropout=0.1)
    m = _symgpt(config, FineTune("dora", 8, targets, alpha=16, dropout=0.1), tmp_path)
    assert (m.quantity("params.trainable").value, m.quantity("params.frozen").value) == _counts(pm)
    assert m.quantity("flops.forward").value == flop_count(pm, B, T)
    assert m.quantity("flops.train").value == flop_count(pm, B, T, backward=True)
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert m.quantity("memory.activations", **opts).value == retained_activation_bytes(pm, B, T)


def test_dora_dropout_over_dora_by_hand(tmp_path):
    # Llama, q (64 -> 64) and v (64 -> 32), L = 2, N = B·T: the base layer again on the dropped
    # input, 2·N·d_in·d_out forward; its input gradient only where that input needs one (layer 1:
    # layer 0's q and v read the frozen embeddings); kept (fp32 on CPU, 4·N·64 bytes each): each
    # adapter's dropped input in place of the one shared input x, and in layer 1, where x needs a
    # gradient, each adapter's dropout mask: layer 0 + 2 − 1, layer 1 + 4 − 1, as LoRA's dropout
    plain = _symgpt(LLAMA, FineTune("dora", 8, ("q", "v"), alpha=16), tmp_path)
    drop = _symgpt(LLAMA, FineTune("dora", 8, ("q", "v"), alpha=16, dropout=0.1), tmp_path)
    N, L = B * T, 2
    again = 2 * N * 64 * (64 + 32)
    assert drop.quantity("flops.forward").value - plain.quantity("flops.forward").value == L * again
    assert drop.quantity("flops.backward").value - plain.quantity("flops.backward").value == (L - 1) * again
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert drop.quantity("memory.activations", **opts).value - plain.quantity("memory.activations", **opts).value \
        == ((2 - 1) + (4 - 1)) * 4 * N * 64


@pytest.mark.parametrize("config,targets", CASES, ids=IDS)
def test_step_flops_equal_flopcountermode(config, targets, tmp_path):
    from oracles.measure import flop_count

    pm = _hf(config, targets)
    m = _symgpt(config, FineTune("lora", 8, targets, alpha=16), tmp_path)
    assert m.quantity("flops.forward").value == flop_count(pm, B, T)
    assert m.quantity("flops.train").value == flop_count(pm, B, T, backward=True)


@pytest.mark.parametrize("config,targets", CASES, ids=IDS)
def test_saved_activations_equal_saved_tensors_hooks(config, targets, tmp_path):
    from oracles.measure import saved_activation_bytes

    pm = _hf(config, targets)
    m = _symgpt(config, FineTune("lora", 8, targets, alpha=16), tmp_path)
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert m.quantity("memory.activations", **opts).value == saved_activation_bytes(pm, B, T, torch.float32)


def test_frozen_linear_keeps_no_input_and_no_weight_gradient(tmp_path):
    # by hand: adapting q and v only, a frozen layer's weight-gradient matmuls (2 FLOPs per MAC
    # of its forward) all go, and the adapters add their own forward, input- and weight-gradient work
    full = _symgpt(LLAMA, FineTune("full"), tmp_path)
    lora = _symgpt(LLAMA, FineTune("lora", 8, ("q", "v")), tmp_path)
    assert full.quantity("params.frozen").value == 0
    assert full.quantity("params.trainable").value == full.params.value
    assert lora.params.value == lora.quantity("params.trainable").value + lora.quantity("params.frozen").value
    g = lora.quantity("memory.gradients", precision="bf16").value
    assert g == 2 * lora.quantity("params.trainable").value
    opt = lora.quantity("memory.optimizer", precision="mixed-bf16", optimizer="adamw").value
    assert opt == (4 + 4 + 4) * lora.quantity("params.trainable").value  # fp32 master, m and v
    w = lora.quantity("memory.weights", precision="bf16").value
    assert w == 2 * lora.params.value


def test_qlora_storage_is_the_papers_bits_per_weight():
    from symgpt.derive.quantize import NF4_BLOCK, NF4_BLOCK2, int8_bits, nf4_bits

    # Dettmers et al. 2023, Sec. 3: a 32-bit absmax per block of 64 is 32/64 = 0.5 bits per
    # parameter; double quantization stores them in 8 bits plus one 32-bit constant per 256 of
    # them: 8/64 + 32/(64·256) = 0.127 bits (to three places)
    assert (NF4_BLOCK, NF4_BLOCK2) == (64, 256)
    assert nf4_bits(block2=None) - 4 == sympy.Rational(1, 2)
    over = nf4_bits() - 4
    assert over == sympy.Rational(8, 64) + sympy.Rational(32, 64 * 256)
    assert round(float(over), 3) == 0.127
    # LLM.int8: one byte per weight and one fp32 scale per output row (bitsandbytes' SCB)
    assert int8_bits(4096) * 4096 * 11008 == 8 * 4096 * 11008 + 32 * 11008


@pytest.mark.parametrize("targets", [("q", "k", "v", "o", "gate", "up", "down"), ("q", "v")])
def test_qlora_base_weights_at_nf4_bytes(targets, tmp_path):
    # bitsandbytes quantizes every linear layer but the head, whichever ones carry adapters
    m = _symgpt(LLAMA, FineTune("qlora", 8, targets), tmp_path)
    w = m.quantity("memory.weights", precision="bf16").value
    linear = 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 96)  # the 7 projections of 2 layers
    rest = m.params.value - linear  # embeddings, norms, head and adapters stay 16-bit
    assert w == 2 * rest + sympy.Rational(linear) * (4 + sympy.Rational(8, 64) + sympy.Rational(32, 64 * 256)) / 8


def test_refusals(tmp_path):
    gpt2 = _symgpt(GPT2, FineTune("full"), tmp_path)
    with pytest.raises(SymgptError, match="fused projection"):
        apply(gpt2, FineTune("lora", 8, ("q",)))
    with pytest.raises(SymgptError, match="no linear layer for LoRA target 'gate'"):
        apply(gpt2, FineTune("lora", 8, ("gate",)))
    assert apply(gpt2, FineTune("lora", 8)).quantity("params.trainable").value == \
        2 * 8 * ((64 + 192) + (64 + 64) + (64 + 256) + (256 + 64))  # all-linear: the projections GPT-2 has
    mix = _symgpt(MIXTRAL, FineTune("full"), tmp_path)
    with pytest.raises(SymgptError, match="experts"):
        apply(mix, FineTune("lora", 8, ("up",)))
    for bad in (dict(rank=0), dict(targets=("qq",)), dict(method="ia3"), dict(targets=())):
        with pytest.raises(SymgptError):
            FineTune(**bad)


def test_qlora_fits_llama_65b_in_48_gb():
    # Dettmers et al. 2023 (abstract): QLoRA fine-tunes a 65B model on a single 48 GB GPU. Named
    # convention: LLaMA-65B (d 8192, 80 layers, 64 heads, d_ff 22016, V 32000: 65,285,660,672
    # parameters), LoRA r = 64 on every linear layer of the blocks, the base in NF4 with double
    # quantization (head, embeddings and norms bf16), adapters and their gradients in bf16, the
    # paged AdamW 32-bit optimizer's two fp32 states per adapter parameter, gradient
    # checkpointing (recompute full), one sequence of 512 tokens (the paper's Figure 6 setting).
    m = symgpt.load("llama-7b", L=80, d=8192, h=64, h_kv=64, d_ff=22016, T_max=2048, B=1, T=512)
    assert m.params.value == 65_285_660_672
    q = apply(m, FineTune("qlora", 64))
    trainable = q.quantity("params.trainable").value
    assert trainable == 80 * 64 * (4 * (8192 + 8192) + 3 * (8192 + 22016))
    o = dict(precision="bf16", recompute="full")
    weights = q.quantity("memory.weights", **o).value
    linear = 80 * (4 * 8192 * 8192 + 3 * 8192 * 22016)
    assert weights == linear * (4 + sympy.Rational(8, 64) + sympy.Rational(32, 64 * 256)) / 8 \
        + 2 * (2 * 32000 * 8192 + 2 * 80 * 8192 + 8192) + 2 * trainable
    total = weights + q.quantity("memory.gradients", **o).value + 8 * trainable \
        + q.quantity("memory.activations", **o).value
    assert 40e9 < total < 48e9
    # the same model in 16-bit with full fine-tuning needs over 16 bytes per parameter: > 1 TB
    full = m.quantity("memory.total", precision="mixed-bf16", recompute="full").value
    assert full > 16 * 65e9


@pytest.mark.parametrize("train", [("embedding",), ("head",), ("embedding", "head")])
def test_embedding_and_head_trained_whole(train, tmp_path):
    # their own weights unfrozen (requires_grad on the base model's tensors), adapters on q and v
    from oracles.measure import flop_count, saved_activation_bytes

    pm = _hf(LLAMA, ("q", "v"))
    base = pm.get_base_model()
    if "embedding" in train:
        base.get_input_embeddings().weight.requires_grad_(True)
    if "head" in train:
        base.get_output_embeddings().weight.requires_grad_(True)
    m = _symgpt(LLAMA, FineTune("lora", 8, ("q", "v"), train=train), tmp_path)
    assert (m.quantity("params.trainable").value, m.quantity("params.frozen").value) == _counts(pm)
    assert m.quantity("flops.train").value == flop_count(pm, B, T, backward=True)
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert m.quantity("memory.activations", **opts).value == saved_activation_bytes(pm, B, T, torch.float32)


@pytest.mark.parametrize("config,targets", [(LLAMA, ("q", "k", "v")), (GPT2, ("q", "k", "v", "o"))], ids=["llama", "gpt2"])
def test_lora_dropout_keeps_a_mask_and_a_dropped_input_per_adapter(config, targets, tmp_path):
    from oracles.measure import flop_count, saved_activation_bytes

    pm = _hf(config, targets, dropout=0.1)
    m = _symgpt(config, FineTune("lora", 8, targets, dropout=0.1), tmp_path)
    opts = dict(convention="pytorch-cpu", precision="fp32", causal_mask_saved=False)
    assert m.quantity("memory.activations", **opts).value == saved_activation_bytes(pm, B, T, torch.float32)
    assert m.quantity("flops.train").value == flop_count(pm, B, T, backward=True)


def test_t5_adapts_self_and_cross_attention_as_peft_does(tmp_path):
    # peft matches T5's "q" and "v" by name: in the encoder's and the decoder's self-attention
    # and in the decoder's cross-attention
    from transformers import AutoConfig, T5ForConditionalGeneration
    from oracles.hf_encdec import flops

    cfg = {"d_model": 64, "d_kv": 16, "d_ff": 96, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 4,
           "vocab_size": 500, "tie_word_embeddings": True}
    torch.manual_seed(0)
    pm = peft.get_peft_model(T5ForConditionalGeneration(AutoConfig.for_model("t5", **cfg)),
                             peft.LoraConfig(r=8, target_modules=["q", "v"]))
    path = tmp_path / "t5.json"
    path.write_text(json.dumps({"model_type": "t5", **cfg}))
    m = apply(symgpt.load(path, B=2, T_enc=8, T_dec=8), FineTune("lora", 8, ("q", "v")))
    assert (m.quantity("params.trainable").value, m.quantity("params.frozen").value) == _counts(pm)
    assert m.quantity("params.trainable").value == 8 * 2 * (64 + 64) * (2 + 2 + 2)  # 6 attentions × q, v
    assert m.quantity("flops.train").value == flops(pm, 2, 8, 8, backward=True)


def test_t5_dora_on_self_and_cross_attention(tmp_path):
    # DoRA on T5's q and v (encoder and decoder self-attention, decoder cross-attention): the
    # identity pass runs once per adapted layer whatever the sequence lengths
    from transformers import AutoConfig, T5ForConditionalGeneration
    from oracles.hf_encdec import flops

    cfg = {"d_model": 64, "d_kv": 16, "d_ff": 96, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 4,
           "vocab_size": 500, "tie_word_embeddings": True}
    torch.manual_seed(0)
    pm = peft.get_peft_model(T5ForConditionalGeneration(AutoConfig.for_model("t5", **cfg)),
                             peft.LoraConfig(r=8, target_modules=["q", "v"], use_dora=True))
    path = tmp_path / "t5.json"
    path.write_text(json.dumps({"model_type": "t5", **cfg}))
    m = apply(symgpt.load(path, B=2, T_enc=8, T_dec=8), FineTune("dora", 8, ("q", "v")))
    assert (m.quantity("params.trainable").value, m.quantity("params.frozen").value) == _counts(pm)
    assert m.quantity("flops.forward").value == flops(pm, 2, 8, 8)
    assert m.quantity("flops.train").value == flops(pm, 2, 8, 8, backward=True)


def test_conv1d_families_are_the_checkpoint_table_s():
    # the families whose layers peft wraps in a fresh parameter under DoRA's dropout are the ones
    # whose checkpoints store (in, out) weights: transformers' Conv1D
    from symgpt.derive.finetune import CONV1D_FAMILIES
    from symgpt.model.tensornames import IN_OUT

    assert CONV1D_FAMILIES == IN_OUT
