"""Memory against seeds 000 and 002 and against the bytes PyTorch saves for backward."""

import pytest
import sympy
import torch

import symgpt
from symgpt.derive.memory import three_term_estimate
from symgpt.core.errors import SymgptError
from symgpt.render.units import bytes_text, in_unit
from symgpt.core.symbols import B, L, T, d

from oracles.measure import saved_tensors
from oracles.torch_gpt2 import GPTConfig, build


def rounded(x, unit):
    return round(float(x) / unit)


# --- lesson LM4-T5 ------------------------------------------------------------------------------------
def test_lm4t5_weights_and_adam_state():
    # "124.4 million parameters need 498 MB in float32 ... and 249 MB in 16-bit formats";
    # "weight (4 bytes), its gradient (4) and two optimizer moments (8): about 16 bytes, ... about 2.0 GB"
    m = symgpt.load("gpt2-small", qkv_bias=False)
    assert rounded(m.quantity("memory.weights", precision="fp32").value, 1e6) == 498
    assert rounded(m.quantity("memory.weights", precision="bf16").value, 1e6) == 249
    state = sum(m.quantity(n, precision="fp32", optimizer="adam").value
                for n in ("memory.weights", "memory.gradients", "memory.optimizer"))
    assert state == 16 * 124_412_160
    assert round(float(in_unit(state, "GB")), 2) == 1.99 and round(float(in_unit(state, "GB")), 1) == 2.0


def test_lm4t5_logits():
    # "with B = 8, n = 1,024 and V = 50,257 it has 411,705,344 entries, 1.6 GB in float32"
    m = symgpt.load("gpt2-small", B=8, T=1024)
    q = m.quantity("memory.logits", precision="fp32")
    assert q.value == 4 * 411_705_344
    assert round(float(in_unit(q.value, "GB")), 1) == 1.6


# --- lecture note 7.3 §5.5-5.6 ---------------------------------------------------------------------------
def test_note73_memory_table():
    # §5.6 (fp16/bf16 with fp32 Adam master): parameters ~250 MB, gradients ~250 MB,
    # optimizer state ~1.5 GB (12 bytes per parameter: master, m, v)
    m = symgpt.load("gpt2-small", B=8, T=1024)
    opts = dict(precision="mixed-fp16", optimizer="adam")
    assert rounded(m.quantity("memory.weights", **opts).value, 10e6) == 25
    assert rounded(m.quantity("memory.gradients", **opts).value, 10e6) == 25
    opt = m.quantity("memory.optimizer", **opts)
    assert opt.paths() == ["optimizer/master", "optimizer/m", "optimizer/v"]
    assert opt.value == 12 * 124_439_808 and round(float(in_unit(opt.value, "GB")), 1) == 1.5
    total = m.quantity("memory.total", **opts)
    assert total.paths()[:2] == ["weights", "gradients"] and total.paths()[-1] == "activations"


def test_note73_three_terms_beside_the_exact_count():
    # §5.5: BTd = 6.3 × 10⁶, BhT² = 1.0 × 10⁸, B·T·4d = 2.5 × 10⁷ entries per block, 2 bytes each
    m = symgpt.load("gpt2-small", B=8, T=1024)
    terms = three_term_estimate(m, "mixed-fp16")
    entries = {p: v / 2 / 12 for p, v in terms.values().items()}
    assert round(entries["BTd"] / 1e5) == 63
    assert round(entries["BhT^2"] / 1e7) == 10
    assert round(entries["4BTd"] / 1e6) == 25
    # the seed's "(1.0 × 10⁸ + 6 · 10⁷) · 2 = 320 MB per block, ~3.8 GB" does not follow from its
    # own terms (BTd + 4BTd = 3.1 × 10⁷, not 6 · 10⁷): the three terms give 3.17 GB
    assert round(float(in_unit(terms.value, "GB")), 2) == 3.17
    exact = m.quantity("memory.activations", precision="mixed-fp16")
    # the exact list holds every term of the seed, and more (Q, K, V copies, LN inputs, ...)
    blocks = exact.part("blocks").expr
    assert sympy.expand(blocks - terms.expr).subs({B: 1, T: 1, L: 1, d: 1}) > 0
    assert exact.value > terms.value


# --- as implemented: saved_tensors_hooks ---------------------------------------------------------
CASES = [  # (torch config, symgpt flags)
    (dict(), {}),
    (dict(tied=False, bias=False), {"tied": False, "bias": False}),
    (dict(d_ff=48, qkv_bias=False), {"qkv_bias": False}),
    (dict(dropout=0.1), {"dropout": True}),
]


def _cases():
    for cfg, flags in CASES:
        for dtype, precision in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
            yield cfg, flags, dtype, precision, "eager", dict(attention="eager")
            if not cfg.get("dropout"):
                yield cfg, flags, dtype, precision, "sdpa", dict(attention="flash")
    # on CPU, SDPA with dropout runs its math kernel: the eager tensors, but the causal mask is
    # added as a float tensor (an add saves nothing) instead of a saved boolean mask. (In bf16 that
    # kernel computes in fp32 on CPU, which no precision policy describes: not a case here.)
    yield dict(dropout=0.1), {"dropout": True}, torch.float32, "fp32", "sdpa", \
        dict(attention="eager", causal_mask_saved=False)


@pytest.mark.parametrize("cfg,flags,dtype,precision,attention,options", list(_cases()))
def test_activations_equal_saved_tensors_hooks(cfg, flags, dtype, precision, attention, options):
    tm = build(GPTConfig(vocab_size=97, block_size=32, n_layer=2, n_head=4, n_embd=16,
                         attention=attention, **cfg), dtype=dtype)
    torch.manual_seed(0)
    measured = sum(e["nbytes"] for e in saved_tensors(tm, 3, 7, dtype=dtype))
    sizes = dict(L=2, h=4, d=16, V=97, T_max=32, B=3, T=7, **({"d_ff": cfg["d_ff"]} if "d_ff" in cfg else {}))
    m = symgpt.load("gpt2", **flags, **sizes)
    # this GPT-2 (nanoGPT's) runs each op as one kernel (nn.GELU(approximate="tanh")), not
    # transformers' composite gelu_new: the fused implementation (hf-eager in test_memory_hf)
    q = m.quantity("memory.activations", convention="pytorch-cpu", precision=precision,
                   implementation="fused", **options)
    assert q == measured


def test_default_convention_is_pytorch_on_cuda():
    # same tensors; on CUDA the norm statistics stay fp32 and dropout masks are 1-byte bools
    m = symgpt.load("gpt2", dropout=True)
    cpu = m.quantity("memory.activations", convention="pytorch-cpu", precision="bf16").expr
    cuda = m.quantity("memory.activations", precision="bf16").expr
    # per block: 2 norms × 2 stats × (4 - 2) bytes; 3 dropout masks (2 of B·T·d, 1 of B·h·T²) × (1 - 2)
    from symgpt.core.symbols import h
    embedding_mask, final_norm = -B * T * d, 2 * 2 * B * T
    # pytorch-cpu follows transformers' eager GPT-2, whose gelu_new also keeps tanh(·), x/2 and
    # 1 + tanh(·) (3 tensors of B·T·4d, 2 bytes) a block; the default keeps x alone
    gelu_new = 3 * B * T * 4 * d * 2
    diff = L * (2 * 2 * 2 * B * T - 2 * B * T * d - B * h * T**2 - gelu_new) + embedding_mask + final_norm
    assert sympy.expand(cuda - cpu - diff) == 0


# --- options ------------------------------------------------------------------------------------
def test_flash_attention_drops_the_t_by_t_tensors():
    g = symgpt.load("gpt2")
    eager = g.quantity("memory.activations", attention="eager").expr
    flash = g.quantity("memory.activations", attention="flash").expr
    assert sympy.degree(eager, T) == 2 and sympy.degree(flash, T) == 1


def test_full_recompute_keeps_one_input_per_block():
    g = symgpt.load("gpt2")
    q = g.quantity("memory.activations", recompute="full", precision="bf16")
    assert q["blocks/checkpoint"] == 2 * B * T * d * L
    assert not [p for p in q.paths() if p.startswith("blocks/") and p != "blocks/checkpoint"]


@pytest.mark.parametrize("options,message", [
    (dict(precision="fp8"), "unknown precision"),
    (dict(optimizer="lion"), "unknown optimizer"),
    (dict(zero=4), "zero must be an integer 0..3"),
    (dict(sp=True), "set tp > 1"),
    (dict(convention="zero"), "known conventions"),
])
def test_bad_options(options, message):
    with pytest.raises(SymgptError, match=message):
        symgpt.load("gpt2-small").quantity("memory.total", **options)


def test_units_never_confused():
    assert in_unit(10**9, "GB") == 1 and in_unit(2**30, "GiB") == 1
    assert bytes_text(2**30) == "1,073,741,824 B = 1.07 GB = 1 GiB"
    q = symgpt.load("gpt2-small").quantity("memory.weights")
    assert q.unit == "bytes" and isinstance(q.value, sympy.Integer)


def test_dropout_option_rebuilds_the_graph_with_dropout():
    # one mask per dropout: embeddings, attention probabilities, attention output, FFN output
    from symgpt.core.symbols import h
    g = symgpt.load("gpt2")
    off = g.quantity("memory.activations").expr
    on = g.quantity("memory.activations", dropout=True).expr
    assert on == symgpt.load("gpt2", dropout=True).quantity("memory.activations").expr
    # bool masks (1 byte); the dropped probabilities are a new tensor for A·V (4 bytes, fp32)
    masks = B * T * d + L * (B * h * T**2 + 2 * B * T * d)
    assert sympy.expand(on - off - masks - L * 4 * B * h * T**2) == 0


def test_tensor_parallel_splits_the_block_weights():
    # Megatron: QKV and FFN-up column-parallel (weight and bias split), projections row-parallel
    # (weight split, bias replicated), embedding vocabulary-parallel, norms and positions replicated
    from symgpt.core.symbols import T_max, V
    q = symgpt.load("gpt2").quantity("memory.weights", tp=4, precision="bf16")
    per_block = 2 * ((12 * d**2 + 3 * d + 4 * d) / 4 + d + d + 4 * d)
    assert sympy.expand(q.expr - (L * per_block + 2 * (V * d / 4 + T_max * d + 2 * d))) == 0
