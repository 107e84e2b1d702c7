"""Build every causal-LM type transformers ships, from its default configuration, on meta.

For each ``model_type`` of ``transformers.models.auto.modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES``
this script

1. builds the default configuration (``AutoConfig.for_model(model_type)``) and sets
   ``architectures`` to the causal-LM class that mapping names;
2. instantiates that class on the meta device with eager attention and records
   ``sum(p.numel() for p in model.parameters())`` (tied parameters once, buffers never);
3. runs one forward of a fixed small batch (B=1, T=8 token ids, an all-ones attention mask,
   ``use_cache=False``, no gradients) under ``torch.utils.flop_counter.FlopCounterMode`` on meta
   and records its total (matmul-like aten ops only, 2 FLOPs per multiply-add; see measure.py);
4. writes the configuration the way a ``config.json`` on the Hub looks
   (``config.to_json_string(use_diff=False)`` of the built model's config) to
   ``tests/configs/zoo/<model_type>.json``.

A type that fails to build (or whose forward fails on meta) is recorded with a one-line reason.
The table ``tests/oracles/zoo/transformers-<version>.json`` is the exact oracle
``tests/test_zoo.py`` and ``benchmarks/zoo.py`` read: neither rebuilds the zoo (building ~200
models takes minutes), so CI never imports transformers for it. Rerun this script by hand after a
transformers upgrade::

    nice -n 19 python3 tests/oracles/zoo_build.py            # resumes from the .partial file
    nice -n 19 python3 tests/oracles/zoo_build.py --fresh    # starts over

Each type gets a time limit (``--timeout``, seconds, SIGALRM); results are appended to a
``.partial`` JSON-lines file as they come, so an interrupted run resumes where it stopped.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
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
CONFIG_DIR = ROOT / "tests" / "configs" / "zoo"
TABLE_DIR = HERE / "zoo"

B, T = 1, 8  # the forward the FLOPs are measured on


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("timed out")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300]


def _forward_flops(model, torch) -> int:
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    emb = model.get_input_embeddings()
    V = emb.num_embeddings if hasattr(emb, "num_embeddings") else model.config.get_text_config().vocab_size
    dev = next(model.parameters()).device
    ids = torch.randint(0, V, (B, T), device=dev)
    # An all-ones attention mask skips the packed-sequence check (an .item() call) of the
    # decoders; the encoders' mask handling calls .item() itself: those run with no mask (every
    # key attended, which is what an all-ones mask means).
    for kwargs in ({"attention_mask": torch.ones_like(ids)}, {}):
        try:
            with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as fcm, torch.no_grad():
                model(input_ids=ids, use_cache=False, **kwargs)
            return int(fcm.get_total_flops())
        except (RuntimeError, NotImplementedError) as exc:
            if "meta" not in str(exc) or not kwargs:
                raise
    raise AssertionError("unreachable")


def build_one(model_type: str, cls_name: str, timeout: int) -> dict:
    import torch
    import transformers
    from transformers import AutoConfig

    rec = {"model_type": model_type, "class": cls_name, "config_class": None, "params": None,
           "flops_forward": None, "B": B, "T": T, "build_error": None, "flops_error": None,
           "attn_implementation": None, "experts_implementation": None, "config_model_type": None,
           "seconds": None}
    t0 = time.time()
    config = None
    model = None
    signal.alarm(timeout)
    try:
        try:
            config = AutoConfig.for_model(model_type)
            rec["config_class"] = type(config).__name__
            config.architectures = [cls_name]
            cls = getattr(transformers, cls_name)
            kw = {}
            if cls._can_set_experts_implementation():
                # one bmm per (token, chosen expert): meta-safe (no data-dependent loop over the
                # experts hit) and counted by FlopCounterMode, tokens * top-k expert matmuls
                kw["experts_implementation"] = rec["experts_implementation"] = "batched_mm"
            with torch.device("meta"):
                try:
                    model = cls._from_config(config, attn_implementation="eager", **kw)
                    rec["attn_implementation"] = "eager"
                except ValueError as exc:  # a class without an eager attention path
                    if "attn_implementation" not in str(exc) and "eager" not in str(exc):
                        raise
                    model = cls._from_config(config, **kw)
                    rec["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
            model.eval()
            rec["params"] = sum(p.numel() for p in model.parameters())
        except _Timeout:
            rec["build_error"] = f"build timed out after {timeout} s"
        except Exception as exc:  # noqa: BLE001 - the reason is the record
            rec["build_error"] = _one_line(exc)
        if model is not None:
            try:
                rec["flops_forward"] = _forward_flops(model, torch)
            except _Timeout:
                rec["flops_error"] = f"forward timed out after {timeout} s"
            except Exception as exc:  # noqa: BLE001
                rec["flops_error"] = _one_line(exc)
    finally:
        signal.alarm(0)
    # the config as a Hub config.json: what save_pretrained writes (the built model's config)
    cfg_obj = model.config if model is not None else config
    if cfg_obj is not None:
        try:
            cfg_obj.architectures = [cls_name]
            rec["config_model_type"] = cfg_obj.model_type  # gpt-sw3's is gpt2's GPT2Config
            text = cfg_obj.to_json_string(use_diff=False)
            CONFIG_DIR.mkdir(parents=True, exist_ok=True)
            (CONFIG_DIR / f"{model_type}.json").write_text(text)
        except Exception as exc:  # noqa: BLE001
            rec["config_error"] = _one_line(exc)
    rec["seconds"] = round(time.time() - t0, 1)
    del model
    gc.collect()
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=int, default=300, help="seconds per type (default 300)")
    ap.add_argument("--fresh", action="store_true", help="ignore the .partial file")
    ap.add_argument("--only", nargs="*", help="these model types only (still merged into the table)")
    args = ap.parse_args(argv)

    import torch
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
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

    mapping = dict(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    todo = [t for t in mapping if (args.only is None and t not in done) or (args.only and t in args.only)]
    for i, mt in enumerate(todo, 1):
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            rec = build_one(mt, mapping[mt], args.timeout)
        done[mt] = rec
        with partial.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        status = rec["build_error"] or (f"params={rec['params']} flops={rec['flops_forward']}"
                                        + (f" ({rec['flops_error'][:80]})" if rec["flops_error"] else ""))
        print(f"[{i}/{len(todo)}] {mt}: {status} [{rec['seconds']} s]", flush=True)

    table = {
        "transformers": version,
        "torch": torch.__version__.split("+")[0],
        "mapping": "transformers.models.auto.modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
        "forward": {"B": B, "T": T, "use_cache": False, "attention_mask": "ones",
                    "attn_implementation": "eager", "device": "meta",
                    "counter": "torch.utils.flop_counter.FlopCounterMode"},
        "types": {mt: {k: v for k, v in done[mt].items() if k not in ("model_type", "seconds", "B", "T")}
                  for mt in mapping if mt in done},
    }
    table_path.write_text(json.dumps(table, indent=1, sort_keys=False) + "\n")
    print(f"wrote {table_path.relative_to(ROOT)} ({len(table['types'])} types)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
