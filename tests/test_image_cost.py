"""What an image costs a vision--language model: the report's ``images`` section
(``documents.latex_images``), the crossover in N_img of the image ops against the decoder, and the
diagram of a VLM with its towers side by side.

Oracles: hand-worked token counts from each processor's rule ((896/14)²/4² = 256 for Gemma 3,
(336/14)² = 576 for LLaVA-1.5, (S/14)²/2² for Qwen2.5-VL, 10·10 + 10 for Fuyu at 300 px);
``FlopCounterMode`` on tiny CPU models (the forward with ``pixel_values`` minus the same forward
without); the images' FLOPs rebuilt at another image side; a hand count of Gemma 3 4B's matmuls
for the crossover; the text as typeset read back by ``latexeq``; TeX's Overfull lines; Graphviz's
own layout (``dot -Tplain``) for the diagram.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from fractions import Fraction

import pytest
import sympy

import clirun
import helpers
import latexeq
import symgpt
from symgpt.core.notation import notation
from symgpt.core.symbols import N_img, S_img
from symgpt.documents import latex_images
from symgpt.documents.latex_doc import context, document, expand, fragment
from symgpt.documents.workload import report_model

import torch
import transformers

ZOO = "tests/configs/vlm_zoo/"
LLAVA = "examples/llava-1.5-7b-config.json"
SYMBOLS = latexeq.symbols_of(notation("default"))
#: models whose images are priced, each with what the report needs bound, and its tokens per image
#: worked by hand from its processor's rule at its own image side
PRICED = {
    "gemma-3-4b": ({}, (896 // 14) ** 2 // 4 ** 2),                      # SigLIP 896/14, 4×4 pool: 256
    LLAVA: ({}, (336 // 14) ** 2),                                       # CLIP 336/14, CLS dropped: 576
    "qwen2.5-vl-7b": ({"vision_run": True, "S_img": 448}, (448 // 14) ** 2 // 2 ** 2),   # 2×2 merge: 256
    ZOO + "mistral3.json": ({}, (1540 // 14) ** 2 // 2 ** 2),            # Pixtral 1540/14, 2×2 merger: 3025
    ZOO + "fuyu.json": ({}, 10 * 10 + 10),                                # 300/30 = 10 patches a side + newlines
    ZOO + "paligemma.json": ({}, (224 // 14) ** 2),                       # SigLIP 224/14: 256
}


def _model(name):
    kw, _ = PRICED[name]
    return report_model(symgpt.load(name, **kw))


@pytest.mark.parametrize("name", sorted(PRICED))
def test_tokens_per_image_hand_worked_and_every_equation_true(name):
    m = _model(name)
    assert "images" in expand("all", m)
    ctx = context("images", m, notation("default"))
    assert ctx["t_value"] == f"{PRICED[name][1]:,}".replace(",", "{,}")
    tex = fragment(m, "images")
    n, wrong, _ = latexeq.check(tex, SYMBOLS, m.bindings)
    assert wrong == [] and n >= 2, (n, wrong)   # t's closed form = its value; F_img's = its value
    # the share of the prefill is the images' FLOPs over the prefill's at the workload
    q = m.quantity("flops.forward")
    n_w = m.bindings[N_img] or 1
    at = {**m.bindings, N_img: sympy.Integer(n_w)}
    images = sum(e.xreplace(at) for _, e in q.breakdown if e.has(N_img))
    assert images > 0 and ctx["share"] is not None


def test_no_section_where_images_are_not_priced():
    held = symgpt.load("qwen2.5-vl-7b")                   # tower held: N_img must be 0
    assert "images" not in expand("all", held)
    assert "prices no image" in fragment(held, "images")
    assert "images" not in expand("all", symgpt.load("gpt2-small"))
    assert "images" not in expand("all", symgpt.load(ZOO + "llava_next.json"))   # tiling not modelled


def _tiny_gemma3(tmp_path):
    cfg = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
           "mm_tokens_per_image": 4, "image_token_index": 5, "boi_token_index": 6, "eoi_token_index": 7,
           "text_config": {"model_type": "gemma3_text", "vocab_size": 300, "hidden_size": 64,
                           "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 2,
                           "num_key_value_heads": 1, "head_dim": 32, "query_pre_attn_scalar": 32,
                           "sliding_window": 512, "max_position_embeddings": 256},
           "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 28, "patch_size": 7}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    config = transformers.Gemma3Config(**{k: v for k, v in cfg.items() if k not in ("model_type", "architectures")})
    torch.manual_seed(0)
    return str(path), transformers.Gemma3ForConditionalGeneration._from_config(config, attn_implementation="eager").eval()


def _flops(model, **inputs) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as fcm, torch.no_grad():
        model(use_cache=False, **inputs)
    return fcm.get_total_flops()


def test_one_image_flops_against_flopcountermode(tmp_path):
    """A tiny Gemma 3 (28×28 images, 7×7 patches pooled 2×2 to 4 tokens): the section's F_img is
    what pixel_values add to the forward."""
    path, model = _tiny_gemma3(tmp_path)
    ids = torch.tensor([[2, 6, 5, 5, 5, 5, 7, 9]])
    with_image = _flops(model, input_ids=ids, pixel_values=torch.rand(1, 3, 28, 28),
                        token_type_ids=(ids == 5).long())
    m = symgpt.load(path, B=1, T=8)
    ctx = context("images", m, notation("default"))
    assert ctx["t_value"] == "4"
    assert ctx["flops_value"] == f"{with_image - _flops(model, input_ids=ids):,}".replace(",", "{,}")


def test_resolution_rows_rebuilt_at_each_side():
    """Qwen2.5-VL keeps an image's size: one row per side, each row's tokens (S/14)²/4 and its FLOPs
    those of the model rebuilt at that side (one image, one sequence, minus the text-only forward)."""
    m = _model("qwen2.5-vl-7b")
    rows = context("images", m, notation("default"))["rows"]
    assert [r["side"] for r in rows] == [224, 336, 448, 672, 896, 1120, 1344]
    for r in rows[:3]:
        s = r["side"]
        assert r["tokens"] == (s // 14) ** 2 // 4
        one = symgpt.load("qwen2.5-vl-7b", vision_run=True, S_img=s, N_img=1, B=1, T=4096)
        none = symgpt.load("qwen2.5-vl-7b", vision_run=True, S_img=s, N_img=0, B=1, T=4096)
        assert r["flops"] == one.quantity("flops.forward").value - none.quantity("flops.forward").value
    # a processor that resizes every image to its tower's side: one row, said so
    g = _model("gemma-3-4b")
    assert [r["side"] for r in context("images", g, notation("default"))["rows"]] == [896]
    assert "resizes every image" in fragment(g, "images")


@pytest.mark.parametrize("name", ["qwen2.5-vl-7b", ZOO + "mistral3.json"])
def test_the_section_fits_the_page(name, tmp_path):
    tex = tmp_path / "images.tex"
    tex.write_text(document(_model(name), ["notation", "images"]), encoding="utf-8")
    code, log, _ = helpers.compile_tex(tex)
    assert code == 0, log[-2000:]
    over = [float(x) for x in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", log)]
    assert all(x <= 1.0 for x in over), sorted(over)[-3:]


def _gemma3_4b_by_hand(T: int) -> tuple[int, int]:
    """(the decoder's forward FLOPs over T positions, one 896-pixel image's tower and projector),
    2 FLOPs a multiply-add, from google/gemma-3-4b-it's config: 34 layers (every sixth global,
    the rest a 1,024-token window), 8 query and 4 key/value heads of 256, d 2,560, MLP 10,240
    (gated), vocabulary 262,208; SigLIP 27 layers of 1,152, MLP 4,304, 14-pixel patches."""
    L, h, kv, dh, d, ff, V, W = 34, 8, 4, 256, 2560, 10240, 262208, 1024
    full = L // 6
    proj = 2 * T * d * dh * (2 * h + 2 * kv)                 # q, k, v, o
    mlp = 3 * 2 * T * d * ff                                 # gate, up, down
    attn = lambda keys: 2 * 2 * T * keys * dh * h            # scores and values
    text = L * (proj + mlp) + full * attn(T) + (L - full) * attn(min(T, W)) + 2 * T * V * d
    n, dv, ffv, Lv = (896 // 14) ** 2, 1152, 4304, 27
    tower = 2 * n * 3 * 14 * 14 * dv + Lv * (2 * n * 4 * dv * dv + 2 * n * 2 * dv * ffv + 2 * 2 * n * n * dv)
    projector = 2 * (n // 16) * dv * d                       # after the 4×4 pool: 256 tokens
    return text, tower + projector


def test_crossover_images_against_text_hand_worked():
    """The command of docs/incoming/image-cost.md: at T = 2,048 the image ops overtake the
    decoder's between 3 and 4 images (N_img = text / one image's)."""
    argv = ["crossover", "gemma-3-4b", "flops.forward", "--as", "N_img",
            "--part", "vision_tower,multi_modal_projector", "--against", "blocks,full_blocks,lm_head",
            "--set", "B=1", "--set", "T=2048", "--json"]
    r = clirun.run(argv)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    text, image = _gemma3_4b_by_hand(2048)
    assert Fraction(out["value_exact"]) == Fraction(text, image)
    first = math.ceil(Fraction(text, image))
    assert first == 4 and (first - 1) * image < text < first * image
    assert any("from N_img = 4 on" in n for n in out["notes"])
    # the section's F_img is the same hand count
    g = report_model(symgpt.load("gemma-3-4b"))
    assert context("images", g, notation("default"))["flops_value"] == f"{image:,}".replace(",", "{,}")


@pytest.mark.parametrize("name,fit", [("gemma-3-4b", None), (LLAVA, None), (LLAVA, "page")])
def test_diagram_draws_the_towers_side_by_side(name, fit, tmp_path):
    """Graphviz's layout of ``symgpt graph``: the token ids and the pixels on one rank, apart, and
    the merge of image features below both (the text path does not wait below the vision tower)."""
    out = tmp_path / "g.dot"
    r = clirun.run(["graph", name, "--set", "N_img=1", "--set", "B=1", "--set", "T=600", "-o", str(out),
                    *(["--fit", fit] if fit else [])])
    assert r.returncode == 0, r.stderr
    plain = subprocess.run(["dot", "-Tplain", str(out)], capture_output=True, text=True, check=True).stdout
    pos = {m.group(1): (float(m.group(2)), float(m.group(3)))
           for m in re.finditer(r'^node "?([\w/]+)"? ([\d.]+) ([\d.]+)', plain, flags=re.M)}
    (xi, yi), (xp, yp) = pos["input_ids"], pos["pixel_values"]
    assert yi == yp and abs(xi - xp) > 1
    assert pos["merge_image_tokens"][1] < yi
    assert pos["embedding/token"][1] > pos["pixel_values"][1] - 2          # the text path starts at the top


def test_the_crossover_in_images_reads_as_one_fraction():
    """The root in N_img is the decoder's FLOPs over one image's, printed as one fraction (its
    window Min(T, W) and global-layer count floor(L/6) kept whole), not one fraction per term."""
    from symgpt.query import crossover

    q = symgpt.load("gemma-3-4b", B=1, T=2048).quantity("flops.forward")
    c = crossover(q, "N_img", part="vision_tower,multi_modal_projector", against="blocks,full_blocks,lm_head")
    assert len(sympy.Add.make_args(c.solution)) == 1
    assert sympy.cancel(c.solution - c.slow * N_img / c.fast) == 0
    assert c.value == Fraction(*_gemma3_4b_by_hand(2048))
