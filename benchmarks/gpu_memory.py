"""symgpt's training-memory model against what one real training step allocates on a GPU.

    python3 benchmarks/gpu_memory.py --out DIR            # CUDA: full-size models (~1-2 min on an H200)
    python3 benchmarks/gpu_memory.py --out DIR --dry-run  # CPU: tiny models, the same code path

For each setting (a transformers model from a config, random weights; attention, precision,
checkpointing) symgpt's predicted bytes per part (exact integers) beside ``memory_allocated``
deltas of the second training step (weights: after building; optimizer: AdamW's first step;
total: ``max_memory_allocated``, the peak), and beside the tensors' own bytes (activations: what
``saved_tensors_hooks`` sees, as tests/oracles/measure.py), raw and in 512-byte allocator blocks.
On ``--dry-run`` (CPU: no allocator) the tensors' bytes are the measurement and the peak is not
measured. Writes DIR/gpu_memory.json and DIR/gpu_memory.md; benchmarks/GPU.md explains it all.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import symgpt  # noqa: E402
from symgpt.core.io import write_atomic  # noqa: E402

PARTS = ("weights", "optimizer", "activations", "gradients", "total")
BLOCK = 512  # the CUDA caching allocator rounds every allocation up to a multiple of 512 bytes

#: name -> (family, attention, precision, checkpointing). precision: fp32 | bf16 (model and AdamW
#: in bf16) | autocast (fp32 model under torch.autocast(bfloat16), compared with mixed-bf16)
SETTINGS = {
    "gpt2-eager-fp32": ("gpt2", "eager", "fp32", False),
    "gpt2-eager-autocast": ("gpt2", "eager", "autocast", False),
    "gpt2-eager-fp32-ckpt": ("gpt2", "eager", "fp32", True),
    "llama-eager-fp32": ("llama", "eager", "fp32", False),
    "llama-sdpa-fp32": ("llama", "sdpa", "fp32", False),
    "llama-sdpa-bf16": ("llama", "sdpa", "bf16", False),
    "llama-eager-fp32-ckpt": ("llama", "eager", "fp32", True),
}
SIZES = {  # (B, T) and the configs: full size on CUDA, tiny on --dry-run
    "full": ((8, 1024), {
        "gpt2": dict(model_type="gpt2", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),  # GPT-2 small
        "llama": dict(model_type="llama", hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                      num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                      max_position_embeddings=2048, tie_word_embeddings=False)}),
    "tiny": ((2, 16), {
        "gpt2": dict(model_type="gpt2", n_embd=64, n_layer=2, n_head=4, n_positions=64, vocab_size=256,
                     bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0),
        "llama": dict(model_type="llama", hidden_size=64, intermediate_size=40, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                      max_position_embeddings=64, tie_word_embeddings=False)}),
}
#: where a difference is expected to come from (a measurement, not symgpt, settles it)
EXPECTED = {
    "all": "each allocation rounds up to 512 B (tensors@512 - tensors); activations also hold the 0-dim loss "
           "(one 512-B block); the peak adds transients that are not saved tensors: the logits' and the "
           "log-softmax's gradients (2 x memory.logits), a block's gradient buffers, AdamW's foreach temporaries",
    "autocast": "symgpt's mixed-bf16 is bf16 weights + fp32 master in the optimizer (2+2+12 B/param); autocast "
                "keeps fp32 weights and gradients and AdamW's 8 B/param, and the activations hold the bf16 "
                "copies of every matmul weight (2 B each, 'saved weight copies'); autocast runs norms, softmax and the "
                "loss in fp32 and the residual stream stays fp32; transformers upcasts the logits before the loss",
    "bf16": "transformers' RMSNorm upcasts to fp32 (saved in fp32), not modelled",
    "sdpa": "CUDA picks the kernel: fp32 -> memory-efficient (logsumexp padded to 32 rows, Philox seed/offset), "
            "bf16 -> FlashAttention-2; GQA keys and values stay unrepeated when transformers passes enable_gqa",
    "ckpt": "transformers checkpoints each layer (use_reentrant=False): saved are the layer's inputs, "
            "including the eager additive float mask (B,1,T,T, stored once), which symgpt's recompute=full omits",
    "llama": "transformers' RMSNorm is unfused PyTorch ops: it also saves x*rstd (pytorch-cpu counts it, "
             "default does not)",
}


def hf_config(family: str, size: str):
    from transformers import AutoConfig

    cfg = dict(SIZES[size][1][family])
    return AutoConfig.for_model(cfg.pop("model_type"), **cfg)


def write_config(family: str, size: str, folder) -> Path:
    """The transformers config of FAMILY at SIZE as a config.json in FOLDER (symgpt reads it)."""
    path = Path(folder) / f"{family}-{size}.json"
    path.write_text(hf_config(family, size).to_json_string())
    return path


def options(name: str) -> dict:
    """symgpt's options for a setting, each one a flag of ``symgpt memory`` (see cli_args)."""
    _, attention, precision, ckpt = SETTINGS[name]
    return dict(convention="default", implementation="hf-eager", optimizer="adamw",
                precision="mixed-bf16" if precision == "autocast" else precision,
                attention="flash" if attention == "sdpa" else "eager", recompute="full" if ckpt else "none")


def cli_args(name: str) -> list[str]:
    """The same options as ``symgpt memory`` arguments."""
    return [a for k, v in options(name).items() for a in (f"--{k}", v)]


def predict(name: str, config: Path, B: int, T: int) -> dict:
    """symgpt's bytes for each part (ints). transformers adds its causal mask as a float tensor
    (nothing saved: ``causal_mask_saved=False``, the one choice that is not a CLI flag); the
    pytorch-cpu convention's activations come along for comparison."""
    m = symgpt.load(config, B=B, T=T)
    opts = dict(options(name), causal_mask_saved=False)
    out = {p: int(m.quantity(f"memory.{p}", **opts).value) for p in PARTS + ("logits",)}
    cpu = dict(opts, convention="pytorch-cpu")
    out["activations_pytorch_cpu"] = int(m.quantity("memory.activations", **cpu).value)
    return out


# ---------------------------------------------------------------- measurement (torch from here on)
def _rounded(n: int) -> int:
    return -(-n // BLOCK) * BLOCK


def _storages(tensors, rounded=False) -> int:
    seen = {}
    for t in tensors:
        st = t.untyped_storage()
        seen.setdefault(st.data_ptr(), st.nbytes())
    return sum(map(_rounded, seen.values()) if rounded else seen.values())


def _hooked_forward(torch, model, forward) -> tuple[int, int, int]:
    """The distinct non-parameter storages autograd saves in one forward: their bytes, the same
    rounded up to 512-byte blocks, and the bytes of those that are parameters cast to another
    dtype (autocast's bf16 weight copies: a parameter's shape, or its transpose, and not its dtype)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    shapes = {s for p in model.parameters() for s in (tuple(p.shape), tuple(p.shape)[::-1])}
    dtype = next(model.parameters()).dtype
    saved = []  # held until counted: no storage is freed and its address reused mid-forward

    def pack(t):
        if t.untyped_storage().nbytes() and t.untyped_storage().data_ptr() not in params:
            saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = forward()
    del loss
    copies = [t for t in saved if t.dtype != dtype and tuple(t.shape) in shapes]
    return _storages(saved), _storages(saved, rounded=True), _storages(copies)


def measure(name: str, size: str, B: int, T: int, device: str) -> dict:
    import torch
    from transformers import AutoModelForCausalLM

    family, attention, precision, ckpt = SETTINGS[name]
    cuda = device == "cuda"
    alloc = torch.cuda.memory_allocated if cuda else (lambda: None)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    cfg = hf_config(family, size)
    gen = torch.Generator(device=device).manual_seed(0)
    ids = torch.randint(0, cfg.vocab_size, (B, T), device=device, generator=gen)  # before the baseline
    sync()
    base = alloc()
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attention)
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    model.train()
    if ckpt:
        kw = {"use_reentrant": False}  # transformers >= 5.2x renames gradient_ to activation_checkpointing_enable
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kw)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kw)
    sync()
    params = list(model.parameters())
    r = {"buffers": _storages(model.buffers()), "buffers_rounded": _storages(model.buffers(), rounded=True),
         "tensors": {}, "rounded": {}, "allocated": {}}
    if cuda:  # the buffers (rotary tables) apart, as they take their 512-byte blocks
        r["allocated"]["weights"] = alloc() - base - r["buffers_rounded"]
    opt = torch.optim.AdamW(params, lr=1e-4)
    cast = (lambda: torch.autocast(device, dtype=torch.bfloat16)) if precision == "autocast" \
        else contextlib.nullcontext

    def forward():
        with cast():
            return model(input_ids=ids, labels=ids, use_cache=False).loss

    # step 1: warm-up; AdamW creates its state at the first step
    forward().backward()
    sync()
    before = alloc()
    opt.step()
    sync()
    if cuda:
        r["allocated"]["optimizer"] = alloc() - before
    state = [t for s in opt.state.values() for t in s.values() if torch.is_tensor(t) and t.dim() > 0]
    grads = [p.grad for p in params if p.grad is not None]
    for part, tensors in (("weights", params), ("optimizer", state), ("gradients", grads)):
        r["tensors"][part], r["rounded"][part] = _storages(tensors), _storages(tensors, rounded=True)
    del state, grads
    opt.zero_grad(set_to_none=True)
    # step 2: measured
    sync()
    static = alloc()
    if cuda:  # anything else step 1 left allocated (a workspace, a cache): reported, in no part
        a = r["allocated"]
        r["allocated_other"] = static - base - r["buffers_rounded"] - a["weights"] - a["optimizer"]
        torch.cuda.reset_peak_memory_stats()
    loss = forward()
    sync()
    if cuda:
        r["allocated"]["activations"] = alloc() - static
    loss.backward()
    del loss
    sync()
    if cuda:
        r["allocated"]["gradients"] = alloc() - static
    opt.step()
    opt.zero_grad(set_to_none=True)
    sync()
    if cuda:
        r["allocated"]["total"] = torch.cuda.max_memory_allocated() - base - r["buffers_rounded"]
    # last: the tensors a hooked forward saves (a saved tensor that holds its own grad_fn is a
    # reference cycle through autograd's C++ graph, which Python's collector cannot free: counted
    # after the measured step, so that what it keeps cannot enter the step's figures)
    r["tensors"]["activations"], r["rounded"]["activations"], r["weight_copies"] = \
        _hooked_forward(torch, model, forward)
    for d in (r["tensors"], r["rounded"]):  # all four at once: what symgpt's total assumes coexists
        d["total"] = sum(d.values())
    return r


def expected(name: str) -> list[str]:
    family, attention, precision, ckpt = SETTINGS[name]
    keys = ["all", family, attention, precision] + (["ckpt"] if ckpt else [])
    return [EXPECTED[k] for k in keys if k in EXPECTED]


def run(out: Path, dry_run: bool, only=None) -> dict:
    import torch
    import transformers

    device = "cpu" if dry_run else "cuda"
    if not dry_run and not torch.cuda.is_available():
        raise SystemExit("gpu_memory: error: CUDA is not available (use --dry-run on a CPU)")
    size = "tiny" if dry_run else "full"
    B, T = SIZES[size][0]
    env = {"device": "cpu (dry run)" if dry_run else torch.cuda.get_device_name(), "torch": torch.__version__,
           "transformers": transformers.__version__, "B": B, "T": T, "size": size}
    if not dry_run:  # the cuBLAS/cuBLASLt workspaces are allocated once, before every baseline
        for dt in (torch.float32, torch.bfloat16):
            w, b = (torch.randn(*s, device="cuda", dtype=dt, requires_grad=True) for s in ((64, 64), (64,)))
            (torch.nn.functional.linear(w, w, b) @ w).sum().backward()
            del w, b
        torch.cuda.synchronize()
        env["workspace_bytes"] = torch.cuda.memory_allocated()
    doc = {"environment": env, "settings": {}}
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in (only or SETTINGS):
            pred = predict(name, write_config(SETTINGS[name][0], size, tmp), B, T)
            s = doc["settings"][name] = {"options": options(name), "cli": cli_args(name), "predicted": pred,
                                         "expected_differences": expected(name)}
            try:
                r = s["measured"] = measure(name, size, B, T, device)
            except Exception as e:  # noqa: BLE001 -- one failed setting (OOM, an API change) keeps the others
                s["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
                r = None
            gc.collect()  # a model's reference cycles (checkpointing partials) hold its memory
            if not dry_run:
                torch.cuda.empty_cache()
            s["parts"] = {}
            for p in PARTS:
                got = None if r is None else r["allocated"].get(p, None if p == "total" else r["tensors"][p])
                diff = None if got is None else got - pred[p]
                s["parts"][p] = {"predicted": pred[p], "measured": got, "difference": diff,
                                 "relative": None if diff is None else f"{diff / pred[p]:+.4%}"}
            print(f"{name}: {s.get('error', 'done')}", file=sys.stderr, flush=True)
            # written after every setting: a run cut short still leaves what it measured
            write_atomic(out / "gpu_memory.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")
            write_atomic(out / "gpu_memory.md", markdown(doc))
    print(markdown(doc))
    return doc


def _n(v) -> str:
    return "n/a" if v is None else f"{v:,}"


def markdown(doc: dict) -> str:
    env = doc["environment"]
    lines = [f"# symgpt memory vs a measured training step ({env['device']}, torch {env['torch']}, "
             f"transformers {env['transformers']}, B={env['B']}, T={env['T']})", "",
             "Bytes. measured: `torch.cuda.memory_allocated` deltas (total: `max_memory_allocated`, the peak); "
             "on a dry run the tensors' own bytes and the saved-tensor hooks. cuBLAS workspace "
             f"(excluded): {_n(env.get('workspace_bytes'))}.", "",
             "| setting | part | symgpt | measured | difference | relative | tensors | tensors@512 |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, s in doc["settings"].items():
        for p, row in s["parts"].items():
            m = s.get("measured", {})
            hooks = (_n(m.get("tensors", {}).get(p)), _n(m.get("rounded", {}).get(p)))
            lines.append(f"| {name} | {p} | {_n(row['predicted'])} | {_n(row['measured'])} | "
                         f"{_n(row['difference'])} | {row['relative'] or 'n/a'} | {hooks[0]} | {hooks[1]} |")
    lines += ["", "symgpt options per setting (`symgpt memory CONFIG --set B=.. --set T=.. ARGS`, plus "
              "causal_mask_saved=False); buffers apart from weights:", ""]
    for name, s in doc["settings"].items():
        m = s.get("measured", {})
        lines.append(f"- {name}: `{' '.join(s['cli'])}`; activations under pytorch-cpu "
                     f"{_n(s['predicted']['activations_pytorch_cpu'])}; memory.logits {_n(s['predicted']['logits'])}; "
                     f"buffers {_n(m.get('buffers'))}; saved weight copies {_n(m.get('weight_copies'))}; "
                     f"left allocated after step 1 in no part {_n(m.get('allocated_other'))}"
                     + (f"; **failed: {s['error']}**" if "error" in s else ""))
    lines += ["", "Expected sources of differences:", ""] + [f"- {k}: {v}" for k, v in EXPECTED.items()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="folder for gpu_memory.json and gpu_memory.md")
    ap.add_argument("--dry-run", action="store_true", help="CPU, tiny models: the same code path")
    ap.add_argument("--only", action="append", choices=sorted(SETTINGS), help="run only these settings")
    a = ap.parse_args(argv)
    run(a.out, a.dry_run, a.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
