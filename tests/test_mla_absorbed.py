"""Multi-latent attention decoded absorbed (``mla="absorbed"``, ``--mla absorbed``).

Oracles:
* a PyTorch decode step written here from the DeepSeek-V2 paper's equations (Sec. 2.1.2-2.1.3:
  q_t^C = W^UQ c_t^Q, k_t^C = W^UK c_t^KV, v_t^C = W^UV c_t^KV, W^UK absorbed into the query and
  W^UV into the output; as deepseek-ai/DeepSeek-V3 inference/model.py's ``attn_impl == "absorb"``
  branch computes it), put in place of transformers' DeepseekV3Attention.forward in a tiny CPU
  DeepSeek-V2/V3: its logits equal the expanded module's, and FlopCounterMode over one decode step
  equals symgpt's absorbed decode FLOPs (the prefill's, expanded, unchanged);
* a hand-worked count of one layer's absorbed ops (FLOPs and bytes), and the closed-form
  difference from the expanded step, by hand;
* the expanded default unchanged: the same FLOPs as FlopCounterMode over transformers' own step.
"""

import json

import pytest
import sympy
import torch

import symgpt
from oracles.inference import decode_flops, prefill
from test_arch_decoders import _tiny, _tiny_hf
from symgpt.core.errors import SymgptError
from symgpt.core.symbols import B, L, T, d_hv, d_nope, h, r_kv

BATCH, PAST = 2, 8


def _rotate(config, q_rot, k_rot, position_embeddings):
    """RoPE as each transformers module applies it: DeepSeek-V2's complex frequencies, V3's cos/sin
    (interleaved where the config says so)."""
    if isinstance(position_embeddings, torch.Tensor):
        from transformers.models.deepseek_v2.modeling_deepseek_v2 import apply_rotary_emb

        return apply_rotary_emb(q_rot, k_rot, position_embeddings)
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as v3

    cos, sin = position_embeddings
    rotate = v3.apply_rotary_pos_emb_interleave if config.rope_interleave else v3.apply_rotary_pos_emb
    return rotate(q_rot, k_rot, cos, sin)


def _absorbed_forward(self, hidden_states, attention_mask=None, cache=None, position_embeddings=None, **kwargs):
    """One MLA call in the absorbed form: scores and values against the cached latent c^KV and the
    shared rotary key, W^UK on the query side, W^UV after the weighted sum (the paper's equations)."""
    kwargs.pop("position_ids", None), kwargs.pop("use_cache", None)
    b, s = hidden_states.shape[:-1]
    nh, dn, dr, dv, r = (self.num_heads, self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim,
                         self.kv_lora_rank)
    if self.q_lora_rank is None:
        q = self.q_proj(hidden_states)
    else:
        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)))
    q = q.view(b, s, nh, dn + dr).transpose(1, 2)
    q_nope, q_rot = torch.split(q, [dn, dr], dim=-1)
    c_kv, k_rot = torch.split(self.kv_a_proj_with_mqa(hidden_states), [r, dr], dim=-1)
    c_kv = self.kv_a_layernorm(c_kv).view(b, 1, s, r)
    k_rot = k_rot.view(b, 1, s, dr)
    q_rot, k_rot = _rotate(self.config, q_rot, k_rot, position_embeddings)
    if cache is not None:
        c_kv, k_rot = cache.update(c_kv, k_rot, self.layer_idx, kwargs=kwargs)
    w = self.kv_b_proj.weight.view(nh, dn + dv, r)
    w_uk, w_uv = w[:, :dn], w[:, dn:]
    q_lat = torch.einsum("bhsd,hdc->bhsc", q_nope, w_uk)                   # q^C W^UK per head
    scores = (torch.einsum("bhsc,btc->bhst", q_lat, c_kv[:, 0])
              + torch.einsum("bhsr,btr->bhst", q_rot, k_rot[:, 0])) * self.scaling
    if attention_mask is not None:
        scores = scores + attention_mask[..., : scores.shape[-1]]
    p = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    o_lat = torch.einsum("bhst,btc->bhsc", p, c_kv[:, 0])                  # Σ p · c^KV
    o = torch.einsum("bhsc,hdc->bhsd", o_lat, w_uv)                        # W^UV per head
    return self.o_proj(o.transpose(1, 2).reshape(b, s, nh * dv)), None


def _tiny_pair(model_type, tmp_path):
    cfg = _tiny(model_type)
    path = tmp_path / f"tiny-{model_type}.json"
    path.write_text(json.dumps(cfg))
    return _tiny_hf(cfg).eval(), symgpt.load(path, B=BATCH, T=PAST)


def _logits(hf, ids):
    with torch.no_grad():
        return hf(input_ids=ids).logits


@pytest.mark.parametrize("model_type", ["deepseek_v2", "deepseek_v3"])
def test_absorbed_step_equals_flopcountermode_of_the_papers_form(model_type, tmp_path, monkeypatch):
    hf, m = _tiny_pair(model_type, tmp_path)
    attn = type(hf.model.layers[0].self_attn)
    expanded_decode = decode_flops(hf, BATCH, PAST)
    expanded_prefill, _ = prefill(hf, BATCH, PAST)
    assert m.quantity("inference.decode.flops") == expanded_decode   # the default: unchanged
    ids = torch.randint(0, 256, (BATCH, PAST))
    want = _logits(hf, ids)
    monkeypatch.setattr(attn, "forward", _absorbed_forward)
    assert torch.allclose(_logits(hf, ids), want, atol=1e-4)          # the same attention
    absorbed = decode_flops(hf, BATCH, PAST)
    assert absorbed < expanded_decode
    assert m.quantity("inference.decode.flops", mla="absorbed") == absorbed
    # the prefill stays expanded (per-head keys and values)
    assert m.quantity("inference.prefill.flops", mla="absorbed") == expanded_prefill


def _points(m, **options):
    from symgpt.derive.roofline import roofline_points

    return {p.node: (p.flops_value, p.bytes_value) for p in roofline_points(m, "decode", **options)}


def test_one_layer_by_hand(tmp_path):
    """Tiny DeepSeek-V2 (B = 2, T = 8 cached, h = 4, r_kv = 32, d_nope = 16, d_rope = 8, d_hv = 12),
    16-bit activations, weights and cache."""
    _, m = _tiny_pair("deepseek_v2", tmp_path)
    pts = _points(m, mla="absorbed")
    lay = "dense_blocks/attention/"  # the one dense layer (first_k_dense_replace = 1)
    # q_nope·W_UK and o·W_UV: 2·B·h·r·(d_nope + d_hv); weight h·(d_nope + d_hv)·r, read once; reads
    # q_nope and o_latent B·h·(d_nope + r), writes q_latent and o B·h·(r + d_hv)
    assert pts[lay + "kv_b_proj"] == (2 * 2 * 4 * 32 * 28, 2 * (4 * 28 * 32 + 2 * 4 * 48 + 2 * 4 * 44))
    # scores: 2·B·h·(T+1)·(r + d_rope); reads the query B·h·40 and the cache B·9·40, writes B·h·9
    assert pts[lay + "scores"] == (2 * 2 * 4 * 9 * 40, 2 * (2 * 4 * 40 + 2 * 9 * 40 + 2 * 4 * 9))
    # values: 2·B·h·(T+1)·r; reads the weights B·h·9 and the latent B·9·32, writes B·h·r
    assert pts[lay + "values"] == (2 * 2 * 4 * 9 * 32, 2 * (2 * 4 * 9 + 2 * 9 * 32 + 2 * 4 * 32))
    for gone in ("kv_heads", "k_nope", "v", "q", "k"):
        assert lay + gone not in pts
    # flash: FlashMLA reads each latent tile once for both products
    assert _points(m, mla="absorbed", attention="flash")[lay + "values"][1] == 2 * 2 * 4 * 32
    # two devices (heads split): each reads the whole latent and rotary key
    two = _points(m, mla="absorbed", chips=2)
    assert two[lay + "scores"] == (2 * 2 * 4 * 9 * 40 // 2, 2 * (2 * 4 * 40 // 2 + 2 * 9 * 40 + 2 * 4 * 9 // 2))
    # the KV cache is the same in both forms
    assert m.quantity("inference.kv_cache", mla="absorbed") == m.quantity("inference.kv_cache")


def test_closed_form_difference_by_hand():
    """Per layer and sequence, expanded minus absorbed: kv_b_proj over T + 1 positions instead of
    the query side (2·h·r·(d_nope + d_hv)·T), scores over d_nope + d_rope instead of r + d_rope and
    values over d_hv instead of r (2·h·(T + 1)·(d_nope + d_hv − 2r))."""
    m = symgpt.load("deepseek-v3")
    diff = m.quantity("inference.decode.flops").expr - m.quantity("inference.decode.flops", mla="absorbed").expr
    hand = 2 * B * L * h * (T * r_kv * (d_nope + d_hv) + (T + 1) * (d_nope + d_hv - 2 * r_kv))
    assert sympy.expand(diff - hand) == 0


def test_notes_name_the_form():
    m = symgpt.load("deepseek-v2-lite", B=1, T=64)
    notes = m.quantity("inference.decode.time", mla="absorbed", hardware="h100-sxm").notes
    assert any("decoded absorbed" in n and "prefill stays expanded" in n for n in notes)
    assert not any("upper bound" in n and "kv_b_proj" in n for n in notes)


def test_other_models_and_choices():
    llama = symgpt.load("llama-7b", B=1, T=64)
    assert llama.quantity("inference.decode.flops", mla="absorbed") == llama.quantity("inference.decode.flops")
    with pytest.raises(SymgptError, match="decode form"):
        llama.quantity("inference.decode.flops", mla="folded")
    # DeepSeek-V3.2's sparse attention (top-k keys): refused in one line, not priced dense
    with pytest.raises(SymgptError, match="Sparse Attention"):
        symgpt.load("deepseek_v32", B=1, T=64).quantity("inference.decode.flops", mla="absorbed")


def test_serve_deepseek_v3_decode_step(capsys):
    from symgpt.cli import main

    args = ["serve", "deepseek-v3", "--hardware", "h200", "--set", "T=4096", "--set", "B=64", "--chips", "4",
            "--ep", "32", "--dp-attention", "8", "--redundant-experts", "32"]
    times = []
    for extra in ([], ["--mla", "absorbed"]):
        assert main(args + extra) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if "attention side (TP)" in x)
        times.append(float(line.split(":")[1].split()[0]))
    assert times[1] < times[0] / 10
