"""Inference of RWKV, RecurrentGemma and xLSTM (``ops.rwkv``, ``ops.rglru``, ``ops.mlstm``: their
``carried`` and ``decode`` rules) against transformers 5.24.0 on tiny CPU models (fp32, eager):

* the state after a prefill: ``RwkvModel``'s five (B, hidden_size, L) tensors (two at the model's
  dtype, three fp32); RecurrentGemma's, held on the modules and not in a Cache object
  (``RecurrentGemmaRecurrentBlock.conv1d_state`` (B, lru_width, K - 1) and
  ``RecurrentGemmaRglru.recurrent_states`` (B, lru_width) fp32 per recurrent layer), with its
  local-attention layers' keys and values in the ``DynamicCache``; ``xLSTMCache.rnn_state``
  (C, n, m per layer, at the model's dtype). The sum of their ``nbytes`` equals
  ``inference.state`` (and the keys and values ``inference.kv_cache``), in fp32 and in bf16;
* a decode step: ``FlopCounterMode`` around one more token's forward from that state equals
  ``inference.decode.flops``; the elementwise work of the single-position branches (the RG-LRU
  step, Griffin's conv1d update, the WKV step) equals the arithmetic that code runs.
"""

import json

import pytest
import sympy
import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import symgpt
from symgpt import ops
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import T

import test_recurrent as rec  # noqa: E402

BATCH, PROMPT = 2, 7

CASES = {
    # hidden_size = attention_hidden_size: transformers' cached decoding needs it (its WKV state is
    # sized at hidden_size)
    "rwkv": ("rwkv", "RwkvForCausalLM", dict(hidden_size=24, num_hidden_layers=3, vocab_size=64,
                                              intermediate_size=40)),
    "rwkv-tied-defaults": rec.CASES["rwkv-tied-defaults"],
    # a window the prompt passes (its cache holds W - 1 positions), and one it does not
    "recurrent_gemma": rec.CASES["recurrent_gemma"],
    "recurrent_gemma-all-recurrent": rec.CASES["recurrent_gemma-all-recurrent"],
    "recurrent_gemma-defaults-pattern": rec.CASES["recurrent_gemma-defaults-pattern"],
    # d·qk_dim_factor and d·v_dim_factor multiples of 64: xLSTMCache's widths (rounded up to 64)
    # equal the layer's, as transformers' cached decoding needs
    "xlstm": ("xlstm", "xLSTMForCausalLM", dict(hidden_size=128, num_hidden_layers=2, vocab_size=64, num_heads=4,
                                                chunk_size=4, qk_dim_factor=0.5, v_dim_factor=1.0,
                                                ffn_proj_factor=1.5, ffn_round_up_to_multiple_of=16)),
    "xlstm-bias": ("xlstm", "xLSTMForCausalLM", dict(hidden_size=64, num_hidden_layers=3, vocab_size=50,
                                                     num_heads=2, chunk_size=2, qk_dim_factor=1.0, use_bias=True)),
}


def _load(config, tmp_path, batch=BATCH):
    path = tmp_path / "config.json"
    data = json.loads(config.to_json_string(use_diff=False))
    data["architectures"] = list(config.architectures)
    path.write_text(json.dumps(data))
    return symgpt.load(str(path), B=batch, T=PROMPT)


def _kwargs(config, model_type, positions):
    """RecurrentGemma: explicit positions (a cache of recurrent layers alone has no length) and, with
    no attention layer, no mask to build."""
    if model_type != "recurrent_gemma":
        return {}
    kw = {"position_ids": positions}
    if "sliding_attention" not in config.layers_block_type:
        kw["attention_mask"] = {"sliding_attention": None}
    return kw


class Run:
    """A model, prefilled with B prompts of PROMPT tokens, that decodes one more token."""

    def __init__(self, case, dtype=torch.float32, batch=BATCH):
        model_type, cls, overrides = CASES[case]
        self.config, model = rec._model(model_type, cls, overrides)
        self.model, self.type, self.batch = model.to(dtype), model_type, batch
        torch.manual_seed(1)
        ids = torch.randint(3, 40, (batch, PROMPT))
        self.cache = transformers.DynamicCache(config=self.model.config) if model_type == "recurrent_gemma" else None
        with torch.no_grad():
            out = self.model(input_ids=ids, use_cache=True, cache=self.cache,
                             **_kwargs(self.config, model_type, torch.arange(PROMPT)[None].expand(batch, PROMPT)))
        if model_type == "rwkv":
            self.state = out.state
        elif model_type == "xlstm":
            self.cache = out.cache

    def state_bytes(self) -> int:
        if self.type == "rwkv":
            return sum(t.nbytes for t in self.state)
        if self.type == "xlstm":
            return sum(t.nbytes for layer in self.cache.rnn_state.values() for t in layer)
        return sum(b.temporal_block.conv1d_state.nbytes + b.temporal_block.rg_lru.recurrent_states.nbytes
                   for b in self.model.model.layers if hasattr(b.temporal_block, "rg_lru"))

    def kv_bytes(self) -> int:
        """The keys and values the cache holds. A full sliding-window layer keeps W - 1 positions,
        symgpt's KV cache Min(T, W) (conventions.md §7): one position more per such layer."""
        if self.type != "recurrent_gemma":
            return 0
        out = 0
        for layer in self.cache.layers:
            for t in (getattr(layer, "keys", None), getattr(layer, "values", None)):
                if isinstance(t, torch.Tensor):
                    out += t.nbytes
                    if t.shape[-2] == self.config.attention_window_size - 1:
                        out += t.nbytes // t.shape[-2]
        return out

    def decode_flops(self) -> int:
        nxt = torch.full((self.batch, 1), 5)
        kw = _kwargs(self.config, self.type, torch.full((self.batch, 1), PROMPT))
        if self.type == "rwkv":
            kw["state"] = self.state
        else:
            kw["cache"] = self.cache
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            self.model(input_ids=nxt, use_cache=True, **kw)
        return fc.get_total_flops()


def test_the_transformers_layouts_are_the_documented_ones():
    """The state tensors as the ops' docstrings describe them (shapes and dtypes of a bf16 model)."""
    r = Run("rwkv", torch.bfloat16)
    assert [(tuple(t.shape), t.dtype) for t in r.state] == \
        [((2, 24, 3), torch.bfloat16)] * 2 + [((2, 24, 3), torch.float32)] * 3
    r = Run("recurrent_gemma", torch.bfloat16)
    block = r.model.model.layers[0].temporal_block
    assert (tuple(block.conv1d_state.shape), block.conv1d_state.dtype) == ((2, 32, 2), torch.bfloat16)
    assert (tuple(block.rg_lru.recurrent_states.shape), block.rg_lru.recurrent_states.dtype) == ((2, 32), torch.float32)
    r = Run("xlstm", torch.bfloat16)
    assert [(tuple(t.shape), t.dtype) for t in r.cache.rnn_state[0]] == \
        [((2, 4, 16, 32), torch.bfloat16), ((2, 4, 16), torch.bfloat16), ((2, 4, 1), torch.bfloat16)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_state_and_kv_cache_equal_what_transformers_keeps(case, tmp_path):
    r = Run(case)
    m = _load(r.config, tmp_path)
    assert r.state_bytes() > 0
    assert int(m.quantity("inference.state", kv_bits=32).value) == r.state_bytes()
    assert int(m.quantity("inference.kv_cache", kv_bits=32).value) == r.kv_bytes()
    parts = dict(m.quantity("inference.memory", kv_bits=32).breakdown)
    assert int(parts["state"].subs(m.bindings)) == r.state_bytes()


@pytest.mark.parametrize("case", ["rwkv", "recurrent_gemma", "xlstm"])
def test_a_bf16_model_keeps_its_state_as_transformers_does(case, tmp_path):
    """bf16: RWKV's token shifts and Griffin's conv state in bf16, their WKV and RG-LRU states in fp32;
    the whole xLSTM state in bf16 (xLSTMCache is made at the model's dtype)."""
    r = Run(case, torch.bfloat16)
    m = _load(r.config, tmp_path)
    assert int(m.quantity("inference.state").value) == r.state_bytes()
    assert int(m.quantity("inference.kv_cache").value) == r.kv_bytes()


@pytest.mark.parametrize("case", sorted(CASES))
def test_decode_step_flops_equal_flopcountermode_from_the_state(case, tmp_path):
    """RWKV at one sequence: with B > 1 transformers' single-token branch broadcasts the cached shift
    (B, d) against the input (B, 1, d) into (B, B, d), B² rows through every projection."""
    batch = 1 if case.startswith("rwkv") else BATCH
    r = Run(case, batch=batch)
    m = _load(r.config, tmp_path, batch=batch)
    assert int(m.quantity("inference.decode.flops").value) == r.decode_flops()


@pytest.mark.parametrize("case", ["rwkv", "xlstm", "recurrent_gemma-all-recurrent"])
def test_with_no_attention_layer_the_decode_step_is_constant_in_T(case, tmp_path):
    model_type, cls, overrides = CASES[case]
    config, _ = rec._model(model_type, cls, overrides)
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    m = symgpt.load(str(path))
    for name in ("inference.decode.flops", "inference.decode.bytes", "inference.state"):
        assert not sympy.expand(m.quantity(name).expr.subs(m.bindings)).has(T), name
    assert m.quantity("inference.kv_cache").expr.subs(m.bindings) == 0


def test_recurrent_gemma_kv_cache_stops_growing_at_the_window(tmp_path):
    """Its attention layers are local: past W the KV cache is constant (Min(T, W) positions)."""
    config, _ = rec._model(*CASES["recurrent_gemma"])
    path = tmp_path / "config.json"
    path.write_text(config.to_json_string(use_diff=False))
    m = symgpt.load(str(path))
    kv = m.quantity("inference.kv_cache")
    at = lambda t: kv.expr.subs({**m.bindings, T: t})  # noqa: E731
    assert at(100) == at(1000) and at(2) < at(4)


# --- the elementwise work of the single-position branches, against the code's arithmetic ---------

@pytest.mark.parametrize("Bn,W,H", [(2, 8, 2), (3, 6, 3)])
def test_rglru_decode_step_against_transformers_module(Bn, W, H):
    from transformers.models.recurrent_gemma.modeling_recurrent_gemma import RecurrentGemmaRglru

    config = transformers.RecurrentGemmaConfig(lru_width=W, num_attention_heads=H, hidden_size=W)
    module = RecurrentGemmaRglru(config).eval()
    for p in module.parameters():
        torch.nn.init.normal_(p)
    module.recurrent_states = torch.randn(Bn, W)
    x, pos = torch.randn(Bn, 1, W), torch.full((Bn, 1), 5)
    op = ops.RGLRU(sympy.Integer(W), sympy.Integer(H))
    shapes = ((Bn, 1, W),)
    work = op.decode(shapes, op.shape(shapes))
    with torch.no_grad(), FlopCounterMode(display=False) as fc, rec.ElementwiseCount() as count:
        module(x, pos)
    assert rec._work(work, "matmul") * 2 == fc.get_total_flops()
    # the reset masks' arithmetic (reset + ~reset·m, and a·~reset) is the code's, per element
    assert rec._work(work, "elementwise") == count.total
    assert op.carried(shapes) == (("recurrent_state", (Bn, W), "fp32"),)


@pytest.mark.parametrize("Bn,C,K", [(2, 5, 4), (1, 3, 2)])
def test_griffin_conv1d_decode_step_against_transformers_block(Bn, C, K):
    """RecurrentGemmaRecurrentBlock's decoding branch: sum(state·w) + b, no conv1d."""
    conv = torch.nn.Conv1d(C, C, K, groups=C, padding=K - 1)
    state, x = torch.randn(Bn, C, K - 1), torch.randn(Bn, C, 1)
    op = ops.GriffinConv1d(sympy.Integer(C), sympy.Integer(K), bias=True)
    shapes = ((Bn, 1, C),)
    work = op.decode(shapes, op.shape(shapes))
    with torch.no_grad(), FlopCounterMode(display=False) as fc, rec.ElementwiseCount() as count:
        full = torch.cat((state, x), -1)
        torch.sum(full * conv.weight[:, 0, :], dim=-1) + conv.bias
    assert rec._work(work, "matmul") == 0 == fc.get_total_flops()
    # the code's products and bias add; its sum's K - 1 additions per channel are a reduction
    assert rec._work(work, "elementwise") == count.total + Bn * C * (K - 1)
    assert op.carried(shapes) == (("conv_state", (Bn, C, K - 1), None),)


@pytest.mark.parametrize("Bn,A", [(2, 3), (1, 5)])
def test_wkv_decode_step_against_transformers_loop(Bn, A):
    from transformers.models.rwkv.modeling_rwkv import rwkv_linear_attention_cpu

    w, u = torch.randn(A), torch.randn(A)
    k, v = torch.randn(Bn, 1, A), torch.randn(Bn, 1, A)
    state = [torch.randn(Bn, A), torch.rand(Bn, A) + 1, torch.randn(Bn, A)]
    op = ops.WKV(sympy.Integer(A))
    shapes = ((Bn, 1, A),) * 2
    with torch.no_grad(), rec.ElementwiseCount() as count:
        _, new = rwkv_linear_attention_cpu(w, u, k, v, state=state, return_state=True)
    assert rec._work(op.decode(shapes, op.shape(shapes)), "elementwise") == count.total
    assert sum(int(sympy.Mul(*s)) for _, s, _ in op.carried(shapes)) == sum(t.numel() for t in new)


def test_what_is_not_modelled_still_refuses_in_one_line(tmp_path):
    config, _ = rec._model(*CASES["xlstm"])
    m = _load(config, tmp_path)
    for options, words in (({"convention": "scaling-book"}, "scaling-book"), ({"chips": 2}, "tensor parallelism")):
        with pytest.raises(SymgptError, match=words) as exc:
            m.quantity("inference.state", **options)
        assert "not modelled for recurrent layers" in str(exc.value) and "\n" not in str(exc.value)


def test_the_state_note_names_what_each_family_keeps(tmp_path):
    for case, words in (("rwkv", "RwkvModel state"), ("recurrent_gemma", "not a Cache"), ("xlstm", "xLSTMCache")):
        config, _ = rec._model(*CASES[case])
        notes = _load(config, tmp_path).quantity("inference.state").notes
        assert any(words in n for n in notes), case


def test_the_memory_page_says_what_each_family_keeps(tmp_path):
    from symgpt.documents.reportparts import costs

    config, _ = rec._model(*CASES["xlstm"])
    m = _load(config, tmp_path)
    costs.write(m, tmp_path)
    text = (tmp_path / "memory.md").read_text()
    assert "xLSTMCache" in text and "LinearAttentionLayer" not in text


@pytest.mark.parametrize("case", ["rwkv", "xlstm"])
def test_widths_transformers_cannot_cache_are_said_on_the_model(case, tmp_path):
    """RWKV with attention_hidden_size != hidden_size and xLSTM with d·factor not a multiple of 64:
    transformers' cached forward fails (its state is sized otherwise); symgpt prices the layer's
    widths and says so."""
    spec = {"rwkv": rec.CASES["rwkv"], "xlstm": rec.CASES["xlstm"]}[case]   # such widths
    config, model = rec._model(*spec)
    with pytest.raises(RuntimeError), torch.no_grad():
        out = model(input_ids=torch.randint(3, 40, (BATCH, PROMPT)), use_cache=True)
        model(input_ids=torch.full((BATCH, 1), 5), use_cache=True,
              **({"state": out.state} if case == "rwkv" else {"cache": out.cache}))
    m = _load(config, tmp_path)
    assert any("cannot decode with a cache" in n for n in m.notes)
    assert int(m.quantity("inference.state").value) > 0
    for ok in (CASES[case],):  # widths transformers caches: no such note
        cfg, _ = rec._model(*ok)
        assert not any("cannot decode" in n for n in _load(cfg, tmp_path).notes)
