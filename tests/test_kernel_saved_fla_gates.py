"""``--implementation fla``, the part that runs on a CPU: what transformers' own PyTorch ops around
the kernels keep, measured with ``torch.autograd.graph.saved_tensors_hooks`` on the transformers
modules themselves (bf16, training mode), with the two kernel calls replaced by stand-ins that save
nothing (the kernels need a GPU; their lists are read from the source, tests/test_kernel_saved_fla.py).

Measured, and compared with the entries the engine adds for them:

* Qwen3-Next's and OLMo-Hybrid's gate tensors of shape (B, T, H): sigmoid(b)'s output at the
  activation dtype, softplus's fp32 input and the product's fp32 operand softplus(·); the beta handed
  to ``chunk_gated_delta_rule`` is the sigmoid's own output in Qwen3-Next (one tensor: the kernel's
  beta) and a new one in OLMo-Hybrid (β·2);
* the layouts the kernels' ``input_guard`` and ``CausalConv1dFn`` see: the conv's input is
  channel-last (stride 1 over channels: no copy), v (and q, k) strided views (copied), g fp32;
* Kimi Linear's ``KimiLinearForgetGate``: exp(g), 1 + exp(g), softplus(g) in fp32 and the bool
  condition g > 20, (B, T, H, d_k) each.
"""

import pytest
import torch

import symgpt
from symgpt.core import symbols
from symgpt.derive.memory_activations import saved_list

transformers = pytest.importorskip("transformers")

B, T = 2, 5
GDN = dict(vocab_size=64, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, linear_num_key_heads=2,
           linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=6, linear_conv_kernel_dim=3)
H = 4  # value heads


class _Stand(torch.autograd.Function):
    """A kernel's stand-in: one output laid out as ``torch.empty_like`` lays it, nothing saved."""

    @staticmethod
    def forward(ctx, x, *others):
        out = torch.empty_like(x)
        out.copy_(x)
        return out

    @staticmethod
    def backward(ctx, grad, *rest):
        return (grad,) + (None,) * (len(ctx.needs_input_grad) - 1)


def _measure(layer, x, module, monkeypatch):
    seen = {}

    def conv(hidden_states, weight, bias=None, activation=None, **kwargs):
        seen["conv_in"] = hidden_states
        return _Stand.apply(hidden_states)

    def chunk(query, key, value, g, beta, **kwargs):
        seen.update(q=query, k=key, v=value, g=g, beta=beta)
        out = _Stand.apply(value.contiguous(), query, key, g, beta)
        return out, None

    monkeypatch.setattr(module, "causal_conv1d_fn", conv)
    monkeypatch.setattr(module, "torch_chunk_gated_delta_rule", chunk)
    kept = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        layer(x)
    return kept, seen


def _gate_entries(model, values):
    q = model.quantity("memory.activations", implementation="fla", precision="bf16")
    bound = {symbols.B: values["B"], symbols.T: values["T"]}
    per = {}
    for node, role, shape, nbytes, _copies, _div, _t in saved_list(model, implementation="fla", precision="bf16"):
        if node.endswith("/delta_rule") and role in ("beta (kernel)", "softplus input (fp32)",
                                                     "softplus output (fp32)", "sigmoid output (before doubling)"):
            n = 1
            for s in shape:
                n *= int(symbols.as_expr(s).xreplace(bound))
            per[role] = n * nbytes
    assert q.notes
    return per


@pytest.mark.parametrize("kind", ["qwen3_next", "olmo_hybrid"])
def test_gdn_gates_measured(kind, monkeypatch, tmp_path):
    import importlib
    import json

    module = importlib.import_module(f"transformers.models.{kind}.modeling_{kind}")
    if kind == "qwen3_next":
        cfg = transformers.Qwen3NextConfig(**GDN, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                           shared_expert_intermediate_size=12, num_hidden_layers=4)
        layer = module.Qwen3NextGatedDeltaNet(cfg, 0)
    else:
        cfg = transformers.OlmoHybridConfig(**GDN, intermediate_size=40, num_hidden_layers=4)
        layer = module.OlmoHybridGatedDeltaNet(cfg, 0)
    torch.manual_seed(0)
    layer = layer.to(torch.bfloat16).train()
    x = torch.randn(B, T, 32, dtype=torch.bfloat16, requires_grad=True)
    kept, seen = _measure(layer, x, module, monkeypatch)
    heads = [t for t in kept if tuple(t.shape) == (B, T, H)]
    measured = sorted((str(t.dtype), t.numel() * t.element_size()) for t in heads)
    assert measured == sorted([("torch.bfloat16", B * T * H * 2), ("torch.float32", B * T * H * 4),
                               ("torch.float32", B * T * H * 4)])
    sigmoid = next(t for t in heads if t.dtype == torch.bfloat16)
    assert (seen["beta"].data_ptr() == sigmoid.data_ptr()) is (kind == "qwen3_next")
    # the layouts the kernels see: conv input channel-last (no copy), q, k, v strided (input_guard copies)
    assert seen["conv_in"].stride(1) == 1
    assert not any(seen[n].is_contiguous() for n in ("q", "k", "v"))
    assert seen["g"].dtype == torch.float32 and seen["g"].is_contiguous()
    # the engine's entries for the same tensors
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg.to_dict()))
    per = _gate_entries(symgpt.load(str(path)), {"B": B, "T": T})
    # the sigmoid's output: the kernel's beta itself (Qwen3-Next), or a tensor besides it (OLMo-Hybrid's β·2)
    sigmoid_entry = "beta (kernel)" if kind == "qwen3_next" else "sigmoid output (before doubling)"
    engine = per["softplus input (fp32)"] + per["softplus output (fp32)"] + per[sigmoid_entry]
    assert engine == sum(n for _d, n in measured)
    assert ("sigmoid output (before doubling)" in per) is (kind == "olmo_hybrid")


def test_kimi_forget_gate_measured():
    from transformers.models.kimi_linear.modeling_kimi_linear import KimiLinearForgetGate

    class Cfg:
        hidden_size, linear_head_dim, linear_num_heads = 32, 8, 4

    torch.manual_seed(0)
    gate = KimiLinearForgetGate(Cfg())
    torch.nn.init.normal_(gate.dt_bias)
    torch.nn.init.normal_(gate.A_log)
    gate = gate.to(torch.bfloat16)
    gate.dt_bias.data = gate.dt_bias.data.float()  # an fp32 parameter, as transformers declares it
    x = torch.randn(B, T, 32, dtype=torch.bfloat16, requires_grad=True)
    kept = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
        out = gate(x)
    per_channel = sorted((str(t.dtype), t.element_size()) for t in kept if tuple(t.shape) == (B, T, 4, 8))
    assert per_channel == sorted([("torch.float32", 4)] * 3 + [("torch.bool", 1)])
    assert out.dtype == torch.float32 and out.shape == (B, T, 4, 8)  # the g chunk_kda keeps as g_input
    m = symgpt.load("kimi-linear-48b-a3b")
    roles = {role: (shape, per) for node, role, shape, per, *_ in saved_list(m, implementation="fla", precision="bf16")
             if node.endswith("/delta_rule")}
    gate_roles = ("exp(g) (fp32)", "1 + exp(g) (fp32)", "g > 20 (where)", "softplus(g) (fp32)")
    assert sorted(roles[r][1] for r in gate_roles) == sorted(p for _d, p in per_channel)
    assert all(len(roles[r][0]) == 3 for r in gate_roles)  # (B, T, H·d_k)
