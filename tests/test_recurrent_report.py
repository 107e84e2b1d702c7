"""``symgpt report`` of models with recurrent layers: written whole, with the recurrent state
beside the KV cache. The state's bytes are checked against the config's own numbers
(transformers' cache after a prefill holds, per Mamba layer, a conv state of
intermediate_size × conv_kernel at the model's width and an SSM state of intermediate_size ×
state_size in fp32: see tests/test_recurrent_inference.py), under the report's fp32 and mixed
bf16 policies."""

import json
import subprocess
import sys
from pathlib import Path

import symgpt
from symgpt.documents.reportparts import costs

MAMBA = Path("examples/mamba-config.json")


def test_memory_md_shows_the_state_beside_the_kv_cache(tmp_path):
    cfg = json.loads(MAMBA.read_text())
    batch = 8
    m = symgpt.load(str(MAMBA), B=batch, T=2048)
    layers, inner = cfg["num_hidden_layers"], cfg["intermediate_size"]
    costs.write(m, tmp_path)
    text = (tmp_path / "memory.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| inference.state |")]
    assert len(rows) == 2  # fp32, then mixed bf16 (16-bit state)
    for row, width in zip(rows, (4, 2)):  # the conv state at the policy's width, the SSM state fp32
        expected = batch * layers * inner * (width * cfg["conv_kernel"] + 4 * cfg["state_size"])
        assert f"| {expected:,} |" in row
    assert "holds the attention layers' keys and values only" in text
    assert "| memory.kv_cache | `0` | 0 |" in text


def test_a_hybrid_report_is_written_whole(tmp_path):
    out = tmp_path / "qwen3-next"
    r = subprocess.run([sys.executable, "-m", "symgpt", "report", "examples/qwen3-next-config.json", "--set", "T=4096",
                        "-o", str(out), "--no-pdf"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (out / "graph.svg").read_text().startswith("<?xml")
    page = (out / "html" / "index.html").read_text()
    assert "inference.state" in page and "inference.kv_cache" in page
    memory = (out / "memory.md").read_text()
    assert "| inference.state |" in memory
