"""Hub ids (``symgpt params Qwen/Qwen3-8B``): a local path first, then a preset, then the Hub;
``hf:`` forces the Hub. No test touches the network: the download function is replaced, or a
Hugging Face cache folder is prepared in tmp_path (the layout huggingface_hub's
``hf_hub_download`` reads: ``models--ORG--NAME/refs/main`` holding a commit and
``snapshots/COMMIT/config.json``) and the command runs with ``HF_HUB_OFFLINE=1``. Oracle: the same
config.json read as a local file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import symgpt
from symgpt.cli import main
from symgpt.core.errors import SymgptError
from symgpt.model import hub

CONFIGS = Path(__file__).parent / "configs"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _cache(tmp_path, repo="acme/tiny", config="qwen3-8b.json", revision="main") -> dict:
    """An HF cache under tmp_path holding *repo*'s config.json; the environment that reads it offline."""
    org, name = repo.split("/")
    root = tmp_path / "hf" / "hub" / f"models--{org}--{name}"
    snap = root / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (snap / "config.json").write_text((CONFIGS / config).read_text())
    (root / "refs").mkdir()
    (root / "refs" / revision).write_text(COMMIT)
    return {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
            "SYMGPT_CACHE_DIR": str(tmp_path / "symgpt-cache"), "HF_HUB_DISABLE_TELEMETRY": "1"}


def _symgpt(env, *argv):
    return subprocess.run([sys.executable, "-m", "symgpt", *argv], env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_hub_id_reads_its_config_from_the_cache_offline(tmp_path):
    env = _cache(tmp_path)
    local = _symgpt(env, "params", str(CONFIGS / "qwen3-8b.json"), "--json")
    for model in ("acme/tiny", "acme/tiny@main", f"hf:acme/tiny@{COMMIT}"):
        out = _symgpt(env, "params", model, "--json")
        assert out.returncode == 0, out.stderr
        got, want = json.loads(out.stdout), json.loads(local.stdout)
        assert got["params"]["value"] == want["params"]["value"] == symgpt.load(CONFIGS / "qwen3-8b.json").params
        assert got["model"] == "tiny"


@pytest.mark.parametrize("model,message", [
    ("acme/absent", "config.json of acme/absent is not in the Hugging Face cache and the Hub cannot be reached"),
    ("acme/tiny@v9", "config.json of acme/tiny@v9 is not in the Hugging Face cache"),
    ("hf:../etc", "is not a Hub id"),
    ("hf:acme/tiny@a..b", "the revision after '@'"),
])
def test_offline_faults_are_one_line_and_write_nothing(tmp_path, model, message):
    env = _cache(tmp_path)
    before = sorted(p for p in tmp_path.rglob("*"))
    out = _symgpt(env, "params", model)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("symgpt: error: ") and out.stderr.count("\n") == 1 and message in out.stderr
    assert sorted(p for p in tmp_path.rglob("*")) == before


def _refuse(*a):
    raise AssertionError("the Hub was asked")


@pytest.mark.parametrize("text", [
    "hf:a/b/c", "hf:" + "a" * 97, "hf:a--b/c", "hf:-a/b", "hf:a/b.git", "hf:a/b@", "hf:a/b@/x",
    "hf:a/b@" + "r" * 256, "hf:a b/c", "hf:a/b@x y", "hf:", "hf:a/..",
])
def test_malformed_ids_are_refused_before_any_download(monkeypatch, text):
    monkeypatch.setattr(hub, "download", _refuse)
    with pytest.raises(SymgptError) as e:
        symgpt.load(text)
    assert "\n" not in str(e.value)


def test_a_local_path_wins_then_a_preset_then_the_hub(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "acme" / "tiny").mkdir(parents=True)
    (tmp_path / "acme" / "tiny" / "config.json").write_text((CONFIGS / "gpt2.json").read_text())
    monkeypatch.setattr(hub, "download", _refuse)
    assert symgpt.load("acme/tiny").params == symgpt.load(CONFIGS / "gpt2.json").params
    assert symgpt.load("gpt2-small").preset is not None
    with pytest.raises(SymgptError, match="no such file"):
        symgpt.load("./acme/absent.json")  # a path by its spelling: never the Hub
    calls = []
    monkeypatch.setattr(hub, "download", lambda repo, fn, rev: calls.append((repo, fn, rev))
                        or str(CONFIGS / "llama-2-7b.json"))
    m = symgpt.load("hf:acme/tiny")  # hf: forces the Hub although the folder exists
    assert calls == [("acme/tiny", "config.json", None)] and m.params == 6_738_415_616
    assert m.source == "hf:acme/tiny"


def _response(status):
    import httpx2

    return httpx2.Response(status, request=httpx2.Request("GET", "https://huggingface.co/acme/tiny"))


def _errors():
    from huggingface_hub import errors as E

    return [
        (E.GatedRepoError("g", response=_response(403)), "is gated: accept its terms on the Hub and set HF_TOKEN"),
        (E.RepositoryNotFoundError("r", response=_response(404)), "Hub repository acme/tiny not found"),
        (E.RevisionNotFoundError("v", response=_response(404)), "has no revision"),
        (E.RemoteEntryNotFoundError("e", response=_response(404)), "Hub repository acme/tiny has no config.json"),
        (E.LocalEntryNotFoundError("l"), "is not in the Hugging Face cache"),
        (E.OfflineModeIsEnabled("o"), "the Hub cannot be reached"),
        (E.HfHubHTTPError("h", response=_response(500)), "the Hub refused config.json of acme/tiny (HTTP 500)"),
        (ConnectionError("c"), "cannot reach the Hub"),
        (TimeoutError("t"), "cannot reach the Hub"),
    ]


def test_huggingface_hub_exceptions_map_by_class(monkeypatch, capsys):
    for exc, message in _errors():
        def boom(repo, fn, rev, exc=exc):
            raise exc
        monkeypatch.setattr(hub, "download", boom)
        assert main(["params", "acme/tiny@dev" if "revision" in message else "acme/tiny"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and message in err, (type(exc).__name__, err)


def test_other_exceptions_are_not_hidden(monkeypatch):
    def boom(repo, fn, rev):
        raise KeyError("a bug")
    monkeypatch.setattr(hub, "download", boom)
    with pytest.raises(KeyError):
        symgpt.load("acme/tiny")


def test_presets_and_local_configs_do_not_import_huggingface_hub(tmp_path):
    code = ("import json, sys, symgpt\nsymgpt.load('gpt2-small').params\n"
            f"symgpt.load({str(CONFIGS / 'gpt2.json')!r}).params\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('huggingface_hub', 'safetensors', 'httpx', 'httpx2', 'requests'))))")
    env = {**os.environ, "SYMGPT_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
