"""Build every image-text-to-text and speech-seq2seq type transformers ships, on meta.

For each ``model_type`` of transformers'
``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES`` and ``MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES``
this script

1. builds the default configuration (``AutoConfig.for_model(model_type)``) and sets
   ``architectures`` to the class that mapping names;
2. instantiates that class on the meta device and records
   ``sum(p.numel() for p in model.parameters())`` (tied parameters once, buffers never);
3. writes the configuration the way a ``config.json`` on the Hub looks
   (``config.to_json_string(use_diff=False)`` of the built model's config) to
   ``tests/configs/vlm_zoo/<model_type>.json``.

A type that fails to build is recorded with a one-line reason. The table
``tests/oracles/vlm_zoo/transformers-<version>.json`` is the exact oracle ``tests/test_vlm_zoo.py``
and ``benchmarks/vlm_zoo.py`` read: neither rebuilds the models, so CI never imports
transformers for it. Rerun by hand after a transformers upgrade::

    nice -n 19 python3 tests/oracles/vlm_zoo_build.py            # resumes from the .partial file
    nice -n 19 python3 tests/oracles/vlm_zoo_build.py --fresh    # starts over
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import io
import json
import os
import signal
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CONFIG_DIR = ROOT / "tests" / "configs" / "vlm_zoo"
TABLE_DIR = HERE / "vlm_zoo"
MAPPINGS = ("MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES")


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("timed out")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300]


def _class(model_type: str, cls_name: str):
    import transformers
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    cls = getattr(transformers, cls_name, None)
    if cls is None:  # a class the top-level namespace does not export
        mod = importlib.import_module(f"transformers.models.{model_type_to_module_name(model_type)}")
        cls = getattr(mod, cls_name)
    return cls


def build_one(model_type: str, cls_name: str, mapping: str, timeout: int) -> dict:
    import torch
    from transformers import AutoConfig

    rec = {"model_type": model_type, "class": cls_name, "mapping": mapping, "config_class": None,
           "params": None, "build_error": None, "config_model_type": None, "seconds": None}
    t0 = time.time()
    config = model = None
    signal.alarm(timeout)
    try:
        config = AutoConfig.for_model(model_type)
        rec["config_class"] = type(config).__name__
        config.architectures = [cls_name]
        cls = _class(model_type, cls_name)
        with torch.device("meta"):
            model = cls._from_config(config)
        rec["params"] = sum(p.numel() for p in model.parameters())
    except _Timeout:
        rec["build_error"] = f"build timed out after {timeout} s"
    except Exception as exc:  # noqa: BLE001 - the reason is the record
        rec["build_error"] = _one_line(exc)
    finally:
        signal.alarm(0)
    cfg_obj = model.config if model is not None else config
    if cfg_obj is not None:
        try:
            cfg_obj.architectures = [cls_name]
            rec["config_model_type"] = cfg_obj.model_type
            text = cfg_obj.to_json_string(use_diff=False)
            CONFIG_DIR.mkdir(parents=True, exist_ok=True)
            (CONFIG_DIR / f"{model_type}.json").write_text(text)
        except Exception as exc:  # noqa: BLE001
            rec["config_error"] = _one_line(exc)
    rec["seconds"] = round(time.time() - t0, 1)
    del model
    gc.collect()
    return rec


def mapping_names() -> dict[str, tuple[str, str]]:
    """model_type -> (class, mapping name), image-text-to-text first."""
    from transformers.models.auto import modeling_auto

    out: dict[str, tuple[str, str]] = {}
    for name in MAPPINGS:
        for mt, cls in getattr(modeling_auto, name).items():
            out.setdefault(mt, (cls, name))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=int, default=300, help="seconds per type (default 300)")
    ap.add_argument("--fresh", action="store_true", help="ignore the .partial file")
    ap.add_argument("--only", nargs="*", help="these model types only (still merged into the table)")
    args = ap.parse_args(argv)

    import torch
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    warnings.filterwarnings("ignore")
    signal.signal(signal.SIGALRM, _on_alarm)

    version = transformers.__version__
    TABLE_DIR.mkdir(parents=True, exist_ok=True)
    table_path = TABLE_DIR / f"transformers-{version}.json"
    partial = TABLE_DIR / f"transformers-{version}.partial"
    done: dict[str, dict] = {}
    if partial.exists() and not args.fresh:
        for line in partial.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["model_type"]] = r
    elif partial.exists():
        partial.unlink()

    mapping = mapping_names()
    todo = [t for t in mapping if (args.only is None and t not in done) or (args.only and t in args.only)]
    for i, mt in enumerate(todo, 1):
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            rec = build_one(mt, *mapping[mt], args.timeout)
        done[mt] = rec
        with partial.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"[{i}/{len(todo)}] {mt}: {rec['build_error'] or rec['params']} [{rec['seconds']} s]",
              flush=True)

    table = {
        "transformers": version,
        "torch": torch.__version__.split("+")[0],
        "mappings": [f"transformers.models.auto.modeling_auto.{m}" for m in MAPPINGS],
        "device": "meta",
        "types": {mt: {k: v for k, v in done[mt].items() if k not in ("model_type", "seconds")}
                  for mt in mapping if mt in done},
    }
    table_path.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n")
    print(f"wrote {table_path.relative_to(ROOT)} ({len(table['types'])} types)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
