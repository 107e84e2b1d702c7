"""Runs ONE peer tool on ONE configuration inside that peer's own environment; prints one JSON line.

    <env>/bin/python benchmarks/peer_child.py TOOL CONFIG_JSON RUNS

Nothing here imports symgpt: it runs under the peer's interpreter. The line holds the tool's own
answers, raw and unconverted (``raw``: what its API returned; ``text``: what it printed, where it
prints), the seconds spent importing it (``imports``) and the seconds of each run (``times``:
building the model -- on the meta device where ``device`` says so -- and counting). Converting
the raw answers into params / FLOPs under a named convention is ``benchmarks/peers.py``'s job.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import sys
import time


def _hf_model(cfg: dict, device: str):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    hf = AutoConfig.for_model(**cfg["hf"])
    hf._attn_implementation = "eager"     # SDPA's mask check calls .item(): not on meta; eager everywhere alike
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager")
    model.eval()
    return model


def _ids(cfg: dict, device: str):
    import torch

    ids = torch.zeros((cfg["B"], cfg["T"]), dtype=torch.long, device=device)
    return ids, torch.ones_like(ids)


def flopcounter(cfg, device):
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    model = _hf_model(cfg, device)
    ids, mask = _ids(cfg, device)
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        model(input_ids=ids, attention_mask=mask, use_cache=False)
    return {"params": sum(p.numel() for p in model.parameters()), "flops": fc.get_total_flops()}, ""


def calflops(cfg, device):
    from calflops import calculate_flops

    model = _hf_model(cfg, device)
    model.config.use_cache = False     # calflops moves every kwarg with .to(device): tensors only
    ids, mask = _ids(cfg, device)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        flops, macs, params = calculate_flops(model, kwargs={"input_ids": ids, "attention_mask": mask},
                                              print_results=False, output_as_string=False)
    return {"flops": flops, "macs": macs, "params": params}, buf.getvalue()


def fvcore(cfg, device):
    import torch
    from fvcore.nn import FlopCountAnalysis, parameter_count

    model = _hf_model(cfg, device)

    class Logits(torch.nn.Module):     # jit.trace wants tensors out, not a ModelOutput
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, ids, mask):
            return self.model(input_ids=ids, attention_mask=mask, use_cache=False).logits

    ids, mask = _ids(cfg, device)
    with torch.no_grad():
        fca = FlopCountAnalysis(Logits(), (ids, mask))
        fca.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
        total = fca.total()
        by_op = dict(fca.by_operator())
        skipped = {k: v for k, v in fca.unsupported_ops().items()}
    return {"flops": total, "by_operator": by_op, "unsupported": skipped,
            "params": parameter_count(model)[""]}, ""


def ptflops(cfg, device, backend):
    from ptflops import get_model_complexity_info

    model = _hf_model(cfg, device)
    ids, mask = _ids(cfg, device)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        macs, params = get_model_complexity_info(
            model, (cfg["B"], cfg["T"]),
            input_constructor=lambda _: {"input_ids": ids, "attention_mask": mask, "use_cache": False},
            as_strings=False, print_per_layer_stat=False, backend=backend)
    return {"macs": macs, "params": params}, buf.getvalue()


def llm_analysis(cfg, device):
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import GPUConfig, ModelConfig, get_dtype_config_by_name, get_gpu_config_by_name
    import logging

    logging.disable(logging.WARNING)
    from llm_analysis.config import get_model_config_by_name

    mc = get_model_config_by_name(cfg["la_name"]) if "la_name" in cfg else ModelConfig(name=cfg["name"], **cfg["la"])
    a = LLMAnalysis(mc, get_gpu_config_by_name("a100-sxm-80gb"), get_dtype_config_by_name("w16a16e16"))
    return {"params": a.get_num_params_total(),
            "flops": a.get_num_flops_fwd_total(batch_size=cfg["B"], seq_len=cfg["T"])}, ""


TOOLS = {"flopcounter": flopcounter, "calflops": calflops, "fvcore": fvcore,
         "ptflops-pytorch": lambda c, d: ptflops(c, d, "pytorch"), "ptflops-aten": lambda c, d: ptflops(c, d, "aten"),
         "llm-analysis": llm_analysis}
IMPORTS = {"flopcounter": ("torch", "transformers", "torch.utils.flop_counter"),
           "calflops": ("torch", "transformers", "calflops"), "fvcore": ("torch", "transformers", "fvcore.nn"),
           "ptflops-pytorch": ("torch", "transformers", "ptflops"),
           "ptflops-aten": ("torch", "transformers", "ptflops"), "llm-analysis": ("llm_analysis.analysis",)}


def main() -> int:
    tool, cfg, runs = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    t0 = time.perf_counter()
    for module in IMPORTS[tool]:      # the tool's import, timed apart from its runs
        importlib.import_module(module)
    imports = time.perf_counter() - t0
    times, raw, text = [], None, ""
    for _ in range(runs):
        s = time.perf_counter()
        raw, text = TOOLS[tool](cfg, cfg.get("device", "meta"))
        times.append(time.perf_counter() - s)
    print(json.dumps({"raw": raw, "text": text[-4000:], "imports": imports, "times": times}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
