"""The decoder families as graphs: every op has its five rules, shapes trace, node paths follow
GPT-2's scheme, constraints hold, and the symbolic totals equal hand-derived formulas."""

import pytest
import sympy

import symgpt
from symgpt import SymgptError
from symgpt.derive.walk import context
from symgpt.families import decoders, families, falcon, gemma, gpt_neox, llama, mistral, mixtral, opt, phi3, qwen2
from symgpt.core.symbols import B, E, L, T, V, W, d, d_ff, d_head, h, h_kv, k

#: the families declared on the generic decoder (``decoders.decoder_family``)
FAMILIES = sorted(n for n, f in families().items() if getattr(f.build, "func", None) is decoders.BUILD)
#: the presets of the first decoder families
PRESETS = [p.name for m in (llama, mistral, mixtral, qwen2, gemma, phi3, falcon, gpt_neox, opt) for p in m.PRESETS]


def test_all_named_families_are_registered():
    assert set(FAMILIES) == {"decoder", "llama", "mistral", "mixtral", "qwen2", "gemma", "phi3",
                             "falcon", "gpt_neox", "opt",
                             # DeepSeek's MLA families are built by blocks/mla.py
                             "qwen3", "qwen2_moe", "qwen3_moe", "gemma2", "gemma3_text", "phi",
                             "starcoder2", "olmo2",
                             # existing blocks under other names, or a flag away
                             "exaone", "internlm3", "iquestcoder", "cwm", "ernie4_5", "granite", "helium",
                             "ministral3", "smollm3", "vaultgemma", "glm", "seed_oss", "olmo3", "hyperclovax",
                             "granitemoe", "granitemoeshared",
                             # mixture-of-experts decoders (the moe group; minicpm3 and youtu are MLA)
                             "olmoe", "minimax_m2", "mellum", "glm4_moe", "kolibri1", "phimoe",
                             # the decoders with designs of their own
                             "gpt_neox_japanese",
                             # dense decoders: ALiBi, learned/sinusoidal positions, GPT-J, Cohere, ...
                             "bloom", "mpt", "gptj", "codegen", "gpt_neo", "gpt_bigcode", "openai_gpt", "cohere",
                             "cohere2", "stablelm", "glm4", "olmo", "exaone4", "persimmon", "arcee", "jais2",
                             "nanochat", "xglm", "ctrl", "biogpt",
                             # attention variants
                             "gpt_oss",
                             # (axk1 is MLA): xIELU, BitNet's sub-norms, Llama 4
                             "apertus", "bitnet", "llama4_text",
                             # MoE decoders, second group
                             "aria_text", "cohere2_moe", "ernie4_5_moe", "exaone_moe", "hy_v3", "minimax_m3_vl_text",
                             # attention output gates and sinks
                             "afmoe", "beam", "flint", "granite_swa", "granitemoe_swa", "laguna", "mimo_v2_flash",
                             # attention of their own design (differential, dynamic mask, mixture of heads)
                             "diffllama", "doge", "jetmoe",
                             # Gated DeltaNet layers among attention layers
                             "qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "lara_mini",
                             # lightning-attention layers among attention layers
                             "minimax",
                             # text decoders read only as a vision--language model's text_config
                             # (tests/test_vlm_held_moe.py)
                             "step3p5", "unlimited_ocr_text"}
    assert set(FAMILIES) <= set(families())


@pytest.mark.parametrize("name", FAMILIES)
def test_every_op_answers_all_five_rules(name):
    m = symgpt.load(name)
    arch = m.arch
    for node, a in arch.ops():
        op, ins = a["op"], arch.input_shapes(node)
        assert tuple(op.shape(ins)) == tuple(a["shape"])
        op.params(ins)
        op.forward(ins, a["shape"])
        ctx = context(arch, node)
        op.backward(ins, a["shape"], ctx)
        op.saved(ins, a["shape"], ctx)


@pytest.mark.parametrize("name", PRESETS)
def test_shape_traces_are_concrete_and_end_in_logits(name):
    trace = symgpt.load(name).shapes(B=2, T=16)
    for t in trace:
        assert all(isinstance(s, sympy.Integer) for s in t.shape), (t.name, t.shape)
    byname = {t.name: t.shape for t in trace}
    m = symgpt.load(name)
    assert byname["lm_head"] == (2, 16, m.sizes["V"])
    assert byname["blocks/attention/scores"] == (2, m.sizes["h"], 16, 16)


PATHS = ["embedding/token", "blocks/attention/q", "blocks/attention/k", "blocks/attention/v",
         "blocks/attention/scores", "blocks/attention/values", "blocks/attention/proj",
         "blocks/norms/attention", "final_norm", "lm_head"]


@pytest.mark.parametrize("name", FAMILIES)
def test_node_paths_follow_the_gpt2_scheme(name):
    m = symgpt.load(name)
    g = m.graph
    fam = m.family.flags
    for p in PATHS:
        if p.startswith("blocks/attention/") and (fam.get("diff_attention") or fam.get("moa")):
            continue  # two attention calls (DiffLlama) or experts of heads (JetMoE): paths of their own
        if p == "blocks/norms/attention" and not fam["pre_norm"]:   # OLMo 2: norms on the outputs
            assert "blocks/norms/post_attention" in g and p not in g
            continue
        if p == "final_norm" and not fam["final_norm"]:  # GPT-1: post-norm blocks, no final norm
            assert p not in g
            continue
        assert p in g, (name, p)
    ffn = "blocks/ffn/experts/" if fam["moe"] else "blocks/ffn/"
    for part in (["gate", "up", "down"] if fam["ffn"] == "gated" else ["up", "down"]):
        assert ffn + part in g, (name, part)
    if fam["moe"]:
        assert g.nodes["blocks/ffn/router"]["op"].tag == "router"
        group = m.arch.groups["blocks/ffn/experts"]
        # Llama 4 (all_experts): transformers' Llama4TextMoe runs every expert on every token
        assert (group.repeat, group.active, group.parent) == (E, E if fam.get("all_experts") else k, "blocks")
    if fam["fused_qkv"]:
        assert "blocks/attention/qkv" in g
    if fam["positions"] == "rotary":
        assert "embedding/rotary" in g and "blocks/attention/q_rotary" in g
        assert "embedding/position" not in g
    # a position table: learned (GPT-2) or sinusoidal (XGLM, CTRL: parameter-free)
    assert ("embedding/position" in g) == (fam["positions"] in ("learned", "sinusoidal"))


def test_llama_params_formula():
    q = symgpt.load("llama").params
    block = 4 * d**2 + 3 * d * d_ff + 2 * d  # Q, K, V, O; gate, up, down; two RMSNorms
    assert q.expr == sympy.expand(2 * V * d + L * block + d)
    gqa = symgpt.load("llama", gqa=True).params
    assert gqa.expr == sympy.expand(2 * V * d + L * (2 * d**2 + 2 * d * h_kv * d / h + 3 * d * d_ff + 2 * d) + d)


def test_mixtral_total_and_active_parameters():
    m = symgpt.load("mixtral")
    attn = 2 * d**2 + 2 * d**2 * h_kv / h
    total = 2 * V * d + d + L * (attn + 2 * d + d * E + E * 3 * d * d_ff)
    active = 2 * V * d + d + L * (attn + 2 * d + d * E + k * 3 * d * d_ff)
    assert m.params.expr == sympy.expand(total)
    assert m.quantity("params.active").expr == sympy.expand(active)
    preset = symgpt.load("mixtral-8x7b")
    assert preset.params == 46_702_792_704
    assert preset.quantity("params.active") == 12_879_925_248  # "12.9B active"
    dense = symgpt.load("llama-7b")
    assert dense.quantity("params.active") == dense.params.value


def test_gemma_head_dim_and_embedding_scale():
    m = symgpt.load("gemma", d_head=256)
    assert "blocks/attention/proj" in m.graph
    assert m.graph.nodes["embedding/scale"]["op"].factor == sympy.sqrt(d)
    expected = V * d + d + L * (2 * d * h * d_head + 2 * d * h_kv * d_head + 3 * d * d_ff + 2 * d)
    assert m.with_(h_kv=1).params.expr == sympy.expand(expected)  # h_kv symbolic once bound


def test_falcon_and_neox_parallel_blocks():
    falcon = symgpt.load("falcon")
    # one shared LayerNorm (2d), fused QKV (h + 2 h_kv) d_head, dense d^2, MLP 8 d^2 (d_ff = 4d)
    fused = d * (h + 2 * h_kv) * d / h
    assert falcon.params.expr == sympy.expand(V * d + 2 * d + L * (2 * d + fused + d**2 + 8 * d**2))
    neox = symgpt.load("gpt_neox")
    assert neox.params.expr == sympy.expand(2 * V * d + 2 * d + L * (12 * d**2 + 13 * d))
    g = neox.graph
    # both branches read the block input
    assert g.nodes["blocks/norms/ffn"]["inputs"] == g.nodes["blocks/norms/attention"]["inputs"]


def test_opt_learned_positions_with_offset_and_projection():
    m = symgpt.load("opt-125m")
    assert m.params.part("embedding/position").value == (2048 + 2) * 768
    with pytest.raises(SymgptError, match="T must not exceed T_max"):
        m.shapes(B=1, T=4096)
    proj = symgpt.load("opt", embed_dim=512, post_norm=True, final_norm=False)
    assert "embedding/project_in" in proj.graph and "embedding/project_out" in proj.graph
    assert proj.graph.nodes["lm_head"]["shape"][-1] == V


def test_rotary_models_have_no_position_parameters_and_no_length_limit():
    m = symgpt.load("llama-7b")
    assert not any("position" in p for p, _ in m.params.breakdown)
    assert m.shapes(B=1, T=8192)[-1].shape == ()  # the loss; T beyond T_max is allowed
    partial = symgpt.load("pythia-160m").graph.nodes["embedding/rotary"]["op"]
    assert partial.fraction == sympy.Rational(1, 4)


def test_sliding_window_attention_flops_use_min_t_w():
    q = symgpt.load("mistral").quantity("flops.forward")
    scores = q.part("blocks/attention/scores").expr
    assert scores == sympy.expand(2 * B * L * h * T * (d / h) * sympy.Min(T, W))
    m = symgpt.load("mistral-7b")
    short, long = m.with_(B=1, T=2048), m.with_(B=1, T=16384)
    full = symgpt.load("mistral-7b", window=False)
    assert short.quantity("flops.forward") == full.with_(B=1, T=2048).quantity("flops.forward").value
    assert long.quantity("flops.forward").value < full.with_(B=1, T=16384).quantity("flops.forward").value


def test_constraints_are_enforced():
    with pytest.raises(SymgptError, match="d must be divisible by h"):
        symgpt.load("llama", d=100, h=3)
    with pytest.raises(SymgptError, match="h must be a multiple of h_kv"):
        symgpt.load("mistral", h=32, h_kv=5)
    with pytest.raises(SymgptError, match="k \\(experts per token\\) must not exceed E"):
        symgpt.load("mixtral", E=2, k=3)
    with pytest.raises(SymgptError, match="flag activation takes one of"):
        symgpt.load("llama", activation="tanh")
    with pytest.raises(SymgptError, match="rotary_pct must be between 1 and 100"):
        symgpt.load("llama", rotary_pct=150).arch
    with pytest.raises(SymgptError, match="post_norm and parallel"):
        symgpt.load("gpt_neox", post_norm=True).arch
    # d_head set explicitly: d need not be divisible by h (Gemma-7B: 16 x 256 != 3072)
    assert symgpt.load("gemma", d=3072, h=16, h_kv=16, d_head=256, L=28, d_ff=24576, V=256000).params == \
        8_537_680_896


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_draws_and_derives(name):
    from symgpt.documents.diagrams import dot_text

    m = symgpt.load(name)
    text = dot_text(m)
    assert "lm_head" in text and "digraph" in text
    m = m.with_(B=1, T=256)
    for q in ("flops.forward", "flops.train", "memory.activations", "memory.kv_cache"):
        assert m.quantity(q).value > 0


@pytest.mark.parametrize("name", ["mixtral-8x7b"])  # the most unusual graph: nested experts
def test_latex_typesets_the_decoder_families(name, tmp_path, capsys):
    from symgpt.cli import main

    out = tmp_path / "f.tex"
    argv = ["latex", name, "--what", "params", "--what", "flops", "--what", "shapes", "-o", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    text = out.read_text()
    assert text.count("\\begin{table}") == text.count("\\end{table}") > 0 and name in text
