"""``symgpt verify``: the op graph against a safetensors checkpoint's headers.

Oracles: tiny transformers models saved on CPU with ``save_pretrained`` (their
``model.parameters()`` count and their state dicts' ``numel * element_size``), and
``safetensors.torch.save_file`` for checkpoints edited by hand (a tensor dropped, reshaped,
added; T5 v1.1's separate LM head, which transformers 5 would tie). The Hub path reads headers
through a replaced ``get_safetensors_metadata`` built from the state dict: no network.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import save_file

import symgpt
from symgpt.cli import main
from symgpt.model import checkpoint as ckpt_mod
from symgpt.model import hub

TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=100, max_position_embeddings=64)


def _save(model, folder: Path, **kw) -> Path:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Writing model shards" on stderr, which the tests read
    model.save_pretrained(folder, **kw)
    return folder


def _llama(tmp_path, dtype=torch.float32, **kw):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**TINY, tie_word_embeddings=False)).to(dtype)
    return model, _save(model, tmp_path / "tiny-llama", **kw)


def _run(capsys, *argv):
    code = main(["verify", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def _count(model) -> int:
    return sum(p.numel() for p in model.parameters())


def _rewrite(folder: Path, edit) -> None:
    """Rewrite folder/model.safetensors with ``edit(state_dict)`` applied."""
    from safetensors.torch import load_file

    path = folder / "model.safetensors"
    sd = load_file(path)
    edit(sd)
    save_file(sd, path)


def test_a_tiny_llama_matches_in_full(tmp_path, capsys):
    model, folder = _llama(tmp_path)
    code, out, err = _run(capsys, folder)
    assert code == 0, out + err
    n = _count(model)
    assert f"parameters: graph {n:,}; checkpoint {n:,}  ok" in out
    assert f"bytes: memory.weights at fp32 {4 * n:,}; checkpoint {4 * n:,}  ok" in out
    assert "DIFF" not in out and out.rstrip().endswith("result: the checkpoint matches the graph")
    assert "ok    attention.k weight" in out and "2 × (32, 64)" in out  # (h_kv * d_head, d) as nn.Linear stores it


def test_a_dropped_tensor_is_a_difference_with_both_sides(tmp_path, capsys):
    model, folder = _llama(tmp_path)
    _rewrite(folder, lambda sd: sd.pop("model.layers.1.mlp.up_proj.weight"))
    code, out, _ = _run(capsys, folder)
    assert code == 1
    line = next(ln for ln in out.splitlines() if "ffn.up weight" in ln)
    assert line.lstrip().startswith("DIFF") and "graph 2 × (128, 64); checkpoint 1 × (128, 64)" in line
    n = _count(model)
    assert f"parameters: graph {n:,}; checkpoint {n - 128 * 64:,}  DIFF" in out
    assert "result: the checkpoint differs" in out


def test_a_reshaped_and_an_unknown_tensor_are_differences(tmp_path, capsys):
    _, folder = _llama(tmp_path)

    def edit(sd):
        sd["model.layers.0.self_attn.k_proj.weight"] = torch.zeros(64, 64)
        sd["model.layers.0.mlp.extra.weight"] = torch.zeros(3)

    _rewrite(folder, edit)
    code, out, _ = _run(capsys, folder)
    assert code == 1
    line = next(ln for ln in out.splitlines() if "attention.k weight" in ln)
    assert "graph 2 × (32, 64); checkpoint 1 × (32, 64) + 1 × (64, 64)" in line
    assert "not mapped to the graph: model.layers.0.mlp.extra.weight F32 1 × (3,)" in out


def test_bf16_and_a_sharded_checkpoint(tmp_path, capsys):
    model, folder = _llama(tmp_path, dtype=torch.bfloat16, max_shard_size="20KB")
    assert (folder / "model.safetensors.index.json").is_file()
    assert len(list(folder.glob("*.safetensors"))) > 1
    code, out, _ = _run(capsys, folder)
    assert code == 0, out
    n = _count(model)
    assert f"bytes: memory.weights at bf16 {2 * n:,}; checkpoint {2 * n:,}  ok" in out
    # one file of it, with the config.json next to it: a part of the model, so a difference
    one = sorted(folder.glob("*.safetensors"))[0]
    assert _run(capsys, one)[0] == 1


def test_the_json_answer(tmp_path, capsys):
    model, folder = _llama(tmp_path)
    code, out, _ = _run(capsys, folder, "--json")
    data = json.loads(out)
    assert code == 0 and data["match"] is True and data["params"] == {"graph": _count(model),
                                                                      "checkpoint": _count(model)}
    assert {r["role"] for r in data["roles"]} >= {"attention.q", "ffn.gate", "head", "norm.final"}


def _t5_v11(tmp_path):
    """A T5 v1.1-style checkpoint: tie_word_embeddings false and its own lm_head.weight, as the
    google/t5-v1_1-* checkpoints hold (transformers 5 would tie the head and not save it)."""
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_decoder_layers=3, num_heads=4,
                   feed_forward_proj="gated-gelu")
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(cfg)
    folder = tmp_path / "t5-v1_1-tiny"
    folder.mkdir()
    sd = {k: v.contiguous() for k, v in model.state_dict().items()
          if k not in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")}
    sd["lm_head.weight"] = torch.zeros(100, 32)
    save_file(sd, folder / "model.safetensors")
    raw = {**cfg.to_dict(), "tie_word_embeddings": False, "architectures": ["T5ForConditionalGeneration"]}
    (folder / "config.json").write_text(json.dumps(raw))
    return model, folder


def test_t5_v1_1_counts_its_own_head_by_default_and_tied_true_is_transformers(tmp_path, capsys):
    model, folder = _t5_v11(tmp_path)
    tied_count = _count(model)  # transformers 5 ties the head: the shared table counted once
    code, out, _ = _run(capsys, folder)
    assert code == 0, out
    assert f"parameters: graph {tied_count + 100 * 32:,}" in out
    assert symgpt.load(folder).params == tied_count + 100 * 32
    code, out, _ = _run(capsys, folder, "--set", "tied=true")
    assert code == 1
    line = next(ln for ln in out.splitlines() if " head weight" in ln)
    assert "graph none; checkpoint 1 × (100, 32)  lm_head.weight" in line
    assert f"parameters: graph {tied_count:,}; checkpoint {tied_count + 100 * 32:,}  DIFF" in out


def test_t5_tied_copies_of_the_shared_table_are_listed_not_counted(tmp_path, capsys):
    model, folder = _t5_v11(tmp_path)
    _rewrite(folder, lambda sd: sd.update({"encoder.embed_tokens.weight": sd["shared.weight"].clone()}))
    code, out, _ = _run(capsys, folder)
    assert code == 0, out
    assert "encoder.embed_tokens.weight: a stored copy of the tied embedding.token weight (not counted)" in out


def _tiny(family):
    import transformers as T

    small = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                 vocab_size=100, max_position_embeddings=64)
    table = {
        "mistral": (T.MistralConfig, T.MistralForCausalLM, dict(small, num_key_value_heads=2)),
        "qwen2": (T.Qwen2Config, T.Qwen2ForCausalLM, dict(small, num_key_value_heads=2)),
        "qwen3": (T.Qwen3Config, T.Qwen3ForCausalLM, dict(small, num_key_value_heads=2, head_dim=16)),
        "gemma": (T.GemmaConfig, T.GemmaForCausalLM, dict(small, num_key_value_heads=2, head_dim=8)),
        "gemma2": (T.Gemma2Config, T.Gemma2ForCausalLM, dict(small, num_key_value_heads=2, head_dim=8)),
        "phi3": (T.Phi3Config, T.Phi3ForCausalLM, dict(small, num_key_value_heads=2, pad_token_id=0)),
        "mixtral": (T.MixtralConfig, T.MixtralForCausalLM, dict(small, num_key_value_heads=2, num_local_experts=3)),
        "gpt2": (T.GPT2Config, T.GPT2LMHeadModel, dict(n_embd=32, n_layer=2, n_head=4, vocab_size=100,
                                                        n_positions=64)),
        "gpt_neox": (T.GPTNeoXConfig, T.GPTNeoXForCausalLM, dict(small)),
        "opt": (T.OPTConfig, T.OPTForCausalLM, dict(hidden_size=32, ffn_dim=48, num_hidden_layers=2,
                                                    num_attention_heads=4, vocab_size=100,
                                                    max_position_embeddings=64, word_embed_proj_dim=32)),
    }
    return table[family]


@pytest.mark.parametrize("family", ["mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "mixtral", "gpt2",
                                    "gpt_neox", "opt"])
def test_each_mapped_family_matches_a_tiny_model(tmp_path, capsys, family):
    cfg_cls, model_cls, kw = _tiny(family)
    torch.manual_seed(0)
    model = model_cls(cfg_cls(**kw))
    folder = _save(model, tmp_path / family)
    code, out, err = _run(capsys, folder)
    assert code == 0, out + err
    assert f"[{family}]" in out
    n = _count(model)
    assert f"parameters: graph {n:,}; checkpoint {n:,}  ok" in out


def test_a_family_without_a_name_table_is_refused(tmp_path, capsys):
    from transformers import BertConfig, BertForMaskedLM

    folder = _save(BertForMaskedLM(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                              intermediate_size=48, vocab_size=100)), tmp_path / "bert")
    code, _, err = _run(capsys, folder)
    assert code == 2 and "verify maps the tensor names of" in err and "bert" in err


def _header_file(folder: Path, header: bytes, declared: int | None = None, data: bytes = b"") -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", **TINY}))
    n = len(header) if declared is None else declared
    path = folder / "model.safetensors"
    path.write_bytes(struct.pack("<Q", n) + header + data)
    return path


@pytest.mark.parametrize("header,declared,data,message", [
    (b"", 0, b"", "not valid JSON"),
    (b"[1]", None, b"", "not a JSON object"),
    (b"{\"a\": {\"dtype\": \"F99\", \"shape\": [1], \"data_offsets\": [0, 4]}}", None, b"\0" * 4, "not a safetensors dtype"),
    (b"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}", None, b"\0" * 4, "holds 4 bytes"),
    (b"{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", None, b"\0" * 4, "no valid shape"),
    (b"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", None, b"", "past the end of the file"),
    (b"{}", 10**12, b"", "a header of 1,000,000,000,000 bytes"),
    (b"{}", 50, b"", "truncated"),
    (b"\xff\xfe", None, b"", "not UTF-8"),
])
def test_malformed_headers_are_one_line_errors(tmp_path, capsys, header, declared, data, message):
    _header_file(tmp_path / "ck", header, declared, data)
    code, out, err = _run(capsys, tmp_path / "ck")
    assert code == 2 and out == ""
    assert err.startswith("symgpt: error: ") and err.count("\n") == 1 and message in err, err


def test_bad_checkpoints_and_inputs(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text(json.dumps({"model_type": "llama", **TINY}))
    assert _run(capsys, tmp_path / "empty")[0] == 2
    (tmp_path / "noconfig").mkdir()
    code, _, err = _run(capsys, tmp_path / "noconfig")
    assert code == 2 and "no config.json" in err
    code, _, err = _run(capsys, "gpt2-small")
    assert code == 2 and "not a Hub id" in err
    _, folder = _llama(tmp_path)
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"x": "../../etc.safetensors"}}))
    code, _, err = _run(capsys, folder)
    assert code == 2 and "not a .safetensors file name in the folder" in err


def test_a_hub_checkpoint_reads_only_headers(tmp_path, capsys, monkeypatch):
    """The Hub path: config.json through hub.download, the headers through
    get_safetensors_metadata (both replaced: no network), never the weights."""
    model, folder = _llama(tmp_path)
    sd = model.state_dict()
    tensors, offset = {}, 0
    for name, t in sd.items():
        size = t.numel() * t.element_size()
        tensors[name] = SimpleNamespace(dtype="F32", shape=list(t.shape), data_offsets=(offset, offset + size))
        offset += size
    meta = SimpleNamespace(files_metadata={"model.safetensors": SimpleNamespace(metadata={}, tensors=tensors)})
    calls = []
    monkeypatch.setattr(hub, "download", lambda repo, fn, rev: calls.append((repo, fn, rev)) or str(folder / fn))
    monkeypatch.setattr(ckpt_mod, "safetensors_metadata", lambda repo, rev: calls.append((repo, "meta", rev)) or meta)
    code, out, _ = _run(capsys, "acme/tiny-llama@v1")
    assert code == 0, out
    assert calls == [("acme/tiny-llama", "config.json", "v1"), ("acme/tiny-llama", "meta", "v1")]
    assert "against hf:acme/tiny-llama@v1" in out and f"checkpoint {_count(model):,}  ok" in out


def test_hub_errors_of_the_headers_are_one_line(tmp_path, capsys, monkeypatch):
    from huggingface_hub import errors as E

    _, folder = _llama(tmp_path)
    monkeypatch.setattr(hub, "download", lambda repo, fn, rev: str(folder / fn))
    for exc, message in [(E.NotASafetensorsRepoError("x"), "holds no safetensors checkpoint"),
                         (E.OfflineModeIsEnabled("x"), "cannot be reached"),
                         (ConnectionError("x"), "cannot reach the Hub")]:
        def boom(repo, rev, exc=exc):
            raise exc
        monkeypatch.setattr(ckpt_mod, "safetensors_metadata", boom)
        code, out, err = _run(capsys, "acme/tiny")
        assert code == 2 and out == "" and message in err and err.count("\n") == 1, err
