"""benchmarks/gpu_memory.py's wiring, on CPU (no GPU, no timing).

Oracles: ``symgpt memory CONFIG --json`` with the script's own CLI arguments (the script's
predictions must be what the CLI prints, less the causal mask's bytes: the script passes
``causal_mask_saved=False``, which no CLI flag sets, so the CLI's mask entry, found by its role,
is the whole difference); and on the dry run real tensors: the parameters', gradients' and
AdamW state's own bytes and ``saved_tensors_hooks`` (tiny transformers models, fp32).
"""
import importlib.util
import json
from pathlib import Path

import pytest

import symgpt
from symgpt.graph import roles
from clirun import run as run_cli

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gpu_memory", ROOT / "benchmarks" / "gpu_memory.py")
gm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gm)

(B, T) = gm.SIZES["tiny"][0]


def _cli(config, args):
    r = run_cli(["memory", str(config), "--set", f"B={B}", "--set", f"T={T}", "--json", *args])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _mask_bytes(config, doc):
    """The CLI's bytes for the causal mask (by role), 0 where nothing saves it (flash)."""
    (mask,) = symgpt.load(config).arch.find(roles.MASK)
    return int(doc["memory.activations"]["breakdown"].get(mask, {"value": 0})["value"])


@pytest.mark.parametrize("name", sorted(gm.SETTINGS))
def test_predictions_equal_the_cli(name, tmp_path):
    config = gm.write_config(gm.SETTINGS[name][0], "tiny", tmp_path)
    pred = gm.predict(name, config, B, T)
    doc = _cli(config, gm.cli_args(name))
    mask = _mask_bytes(config, doc)
    for part in ("weights", "optimizer", "gradients", "logits"):
        assert pred[part] == int(doc[f"memory.{part}"]["value"])
    assert pred["activations"] == int(doc["memory.activations"]["value"]) - mask
    assert pred["total"] == int(doc["memory.total"]["value"]) - mask
    cpu = _cli(config, gm.cli_args(name) + ["--convention", "pytorch-cpu"])  # the later flag wins
    assert pred["activations_pytorch_cpu"] == int(cpu["memory.activations"]["value"]) - _mask_bytes(config, cpu)
    _, attention, _, ckpt = gm.SETTINGS[name]
    assert (mask > 0) == (attention == "eager" and not ckpt)  # only eager, stored activations keep one


def test_cli_args_are_the_options():
    assert gm.cli_args("llama-sdpa-bf16") == [
        "--convention", "default", "--implementation", "hf-eager", "--optimizer", "adamw",
        "--precision", "bf16", "--attention", "flash", "--recompute", "none"]
    assert gm.options("gpt2-eager-autocast")["precision"] == "mixed-bf16"
    assert gm.options("gpt2-eager-fp32-ckpt")["recompute"] == "full"


def test_dry_run_measures_tiny_models_on_cpu(tmp_path, capsys):
    only = ["gpt2-eager-fp32", "llama-eager-fp32", "gpt2-eager-autocast"]
    doc = gm.run(tmp_path / "out", dry_run=True, only=only)
    assert json.loads((tmp_path / "out" / "gpu_memory.json").read_text()) == json.loads(json.dumps(doc))
    table = (tmp_path / "out" / "gpu_memory.md").read_text()
    assert table in capsys.readouterr().out
    assert list(doc["settings"]) == only and doc["environment"]["device"] == "cpu (dry run)"
    for s in doc["settings"].values():
        assert s["measured"]["allocated"] == {}  # no allocator on CPU: nothing pretends to be
        assert s["parts"]["total"]["measured"] is None and "| total | " in table
    # GPT-2 fp32: every measured part equals symgpt's (tensors' own bytes; saved-tensor hooks)
    gpt2 = doc["settings"]["gpt2-eager-fp32"]["parts"]
    for part in ("weights", "optimizer", "activations", "gradients"):
        assert gpt2[part]["difference"] == 0, part
    # the hook count rounded to 512-byte blocks is never below the raw count
    m = doc["settings"]["gpt2-eager-fp32"]["measured"]
    for part in ("weights", "optimizer", "activations", "gradients"):
        assert m["tensors"][part] <= m["rounded"][part] < m["tensors"][part] + 512 * 200
    # LLaMA: transformers' unfused RMSNorm also keeps x·rstd, which pytorch-cpu counts and default
    # does not: (2 norms a layer + the final one) · B·T·d fp32 values, by hand
    llama = doc["settings"]["llama-eager-fp32"]
    L, d = 2, 64
    assert llama["measured"]["tensors"]["activations"] == llama["predicted"]["activations_pytorch_cpu"]
    assert llama["parts"]["activations"]["difference"] == (2 * L + 1) * B * T * d * 4
    # autocast: the fp32 model's weights, gradients and AdamW state are 4, 4 and 8 bytes a parameter
    # where symgpt's mixed-bf16 policy says 2, 2 and 12 (bf16 weights, fp32 master in the optimizer)
    auto = doc["settings"]["gpt2-eager-autocast"]["parts"]
    assert auto["weights"]["measured"] == 2 * auto["weights"]["predicted"] == gpt2["weights"]["measured"]
    assert auto["gradients"]["measured"] == 2 * auto["gradients"]["predicted"]
    assert 3 * auto["optimizer"]["measured"] == 2 * auto["optimizer"]["predicted"]
    # and autocast saves a bf16 copy of every matmul weight: the tied token table (LM head) and
    # 12·d² a layer (Conv1D c_attn 3d², c_proj d², c_fc 4d², mlp c_proj 4d²), 2 bytes each
    V = 256
    assert doc["settings"]["gpt2-eager-autocast"]["measured"]["weight_copies"] == 2 * (V * d + L * 12 * d * d)
    assert m["weight_copies"] == 0


def test_no_cuda_is_one_clear_error(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="gpu_memory: error: CUDA is not available"):
        gm.run(tmp_path / "out", dry_run=False)


def test_a_failed_setting_is_reported_and_the_others_still_run(tmp_path, monkeypatch):
    real = gm.measure

    def measure(name, *a):
        if name == "gpt2-eager-fp32":
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore detail")
        return real(name, *a)

    monkeypatch.setattr(gm, "measure", measure)
    doc = gm.run(tmp_path, dry_run=True, only=["gpt2-eager-fp32", "gpt2-eager-fp32-ckpt"])
    bad, good = doc["settings"]["gpt2-eager-fp32"], doc["settings"]["gpt2-eager-fp32-ckpt"]
    assert bad["error"] == "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert all(row["measured"] is None for row in bad["parts"].values())
    assert good["parts"]["weights"]["difference"] == 0 and "error" not in good
    assert "**failed: RuntimeError: CUDA out of memory" in (tmp_path / "gpu_memory.md").read_text()


def test_dry_run_files_are_byte_identical_run_to_run(tmp_path):
    for folder in ("a", "b"):
        gm.run(tmp_path / folder, dry_run=True, only=["llama-sdpa-bf16"])
    for f in ("gpu_memory.json", "gpu_memory.md"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
