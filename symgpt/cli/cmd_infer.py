"""symgpt infer MODEL: prefill and decode cost, the KV cache, memory and a roofline on named
hardware, from the op graph (see symgpt.derive.inference)."""

from __future__ import annotations

from .common import add_json, add_model, emit, load_model

HELP = "inference: prefill and decode FLOPs, bytes and time, KV cache, memory, critical batch"
DESCRIPTION = HELP + (". Example: 'symgpt infer llama-7b --set B=8 --set T=2048 --hardware h100-sxm "
                      "--prompt 512 --generate 128'. Without --hardware (or --peak and --bandwidth) "
                      "times stay symbolic in F_peak and BW_mem.")


def add_arguments(p):
    from . import choices

    add_model(p)
    add_json(p)
    p.add_argument("--convention", default="default", choices=choices.INFER_CONVENTIONS,
                   help="default: a roofline per op; scaling-book: Austin et al., How to Scale Your Model")
    p.add_argument("--hardware", choices=choices.HARDWARE, metavar="NAME",
                   help="an accelerator profile (see 'symgpt hardware')")
    p.add_argument("--peak", metavar="FLOP/S", help="peak FLOP/s of one device (overrides the profile's)")
    p.add_argument("--bandwidth", metavar="BYTES/S", help="memory bandwidth of one device")
    p.add_argument("--device-memory", metavar="BYTES", help="memory of one device")
    p.add_argument("--chips", metavar="N", default="1", help="tensor-parallel devices (default 1)")
    p.add_argument("--link-bandwidth", metavar="BYTES/S",
                   help="interconnect bandwidth per device per direction (for --chips)")
    p.add_argument("--weight-bits", type=int, default=16, choices=choices.WEIGHT_BITS,
                   help="bits per weight of the dense matmuls (default 16)")
    p.add_argument("--group-size", metavar="N", help="a 16-bit scale per group of N quantized weights")
    p.add_argument("--kv-bits", type=int, choices=choices.WEIGHT_BITS, help="KV-cache bits (default: activations')")
    p.add_argument("--act-bits", type=int, default=16, choices=choices.ACT_BITS,
                   help="activation bits (8: int8 activations and the int8 peak)")
    p.add_argument("--fp8", action="store_true", help="weights and activations in fp8 (the fp8 peak)")
    p.add_argument("--attention", default="eager", choices=choices.ATTENTION)
    p.add_argument("--causal", action="store_true", help="halve the prefill's attention matmuls")
    p.add_argument("--mla", default="expanded", choices=choices.MLA_FORMS,
                   help="multi-latent attention's decode step: expanded (default; transformers' "
                        "DeepseekV3Attention re-expands the cached latent) or absorbed (DeepSeek's inference: "
                        "W_UK and W_UV folded into the query and output, attention over the latent)")
    p.add_argument("--prompt", metavar="P", help="prompt tokens for a generation (with --generate)")
    p.add_argument("--generate", metavar="G", help="new tokens to generate (with --prompt)")
    p.add_argument("--figure", metavar="FILE", help="write a roofline figure: FILE.tex (pgfplots, a "
                   "standalone document) or FILE.svg; needs B, T and a device")


def options(args) -> dict:
    from ..core.errors import SymgptError
    from .args import integer

    from .machine import device_options

    out = {"convention": args.convention, "weight_bits": args.weight_bits, "act_bits": args.act_bits,
           "attention": args.attention, **device_options(args)}
    if args.causal:
        out["causal"] = True
    if args.mla != "expanded":
        out["mla"] = args.mla
    if (args.prompt is None) != (args.generate is None):
        raise SymgptError("--prompt and --generate go together")
    if args.prompt is not None:
        out["prompt"] = integer(args.prompt, "--prompt")
        out["generate"] = integer(args.generate, "--generate")
    return out


NAMES = ("inference.weights", "inference.kv_cache", "inference.memory",
         "inference.prefill.flops", "inference.prefill.bytes", "inference.prefill.time",
         "inference.decode.flops", "inference.decode.bytes", "inference.decode.time",
         "inference.intensity", "inference.critical_batch")
GENERATION = ("inference.generate.time", "inference.ttft", "inference.tpot", "inference.tokens_per_s")


def run(args) -> int:
    from ..derive.roofline import roofline_points
    from ..core.errors import SymgptError
    from ..render.inference_text import infer_text
    from ..render.jsonout import dumps
    from .costargs import payload

    m = load_model(args)
    opts = options(args)
    base = {k: v for k, v in opts.items() if k not in ("prompt", "generate")}
    qs, notes = [], []
    from ..derive.recurrent import recurrent_ops

    # a model with recurrent layers: their state beside the KV cache
    names = NAMES[:2] + ("inference.state",) + NAMES[2:] if recurrent_ops(m.arch) else NAMES
    for name in names:
        try:
            qs.append(m.quantity(name, **base))
        except SymgptError as e:
            if name != "inference.critical_batch":
                raise
            notes.append(f"{name}: {e}")
    if "prompt" in opts:
        for name in GENERATION:
            if name == "inference.tpot" and opts["generate"] == 1:
                notes.append(f"{name}: one new token is the prefill's; no decode step to average")
                continue
            qs.append(m.quantity(name, **opts))
    points = roofline_points(m, "decode", **base) if {"B", "T"} <= set(m.sizes) else []
    if args.figure:
        _figure(m, args.figure, base)
    if args.json:
        shown = {k: (str(v) if not isinstance(v, (bool, int, str)) else v) for k, v in opts.items()}
        out = payload(m, qs[0].convention, shown, qs)
        if notes:
            out["notes"] = notes
        emit(dumps(out))
        return 0
    hint = _unbound(qs)
    emit(infer_text(m, qs, points, notes, hint))
    return 0


def _unbound(qs) -> str:
    free = sorted({s.name for q in qs for s in q.expr.free_symbols if s not in q.bindings})
    if not free:
        return ""
    hw = [n for n in free if n in ("F_peak", "BW_mem", "BW_link")]
    sizes = [n for n in free if n not in hw]
    parts = []
    if sizes:
        parts.append("bind " + " ".join(f"--set {n}=N" for n in sizes))
    if hw:
        parts.append("give --hardware NAME (or --peak, --bandwidth, --link-bandwidth)")
    return f"unbound: {', '.join(free)} -- the formulas above are symbolic; " + "; ".join(parts)


def _figure(m, path, options) -> None:
    from pathlib import Path

    from ..derive.roofline import roofline
    from ..core.errors import SymgptError
    from ..core.io import write_atomic
    from ..render.roofline import roofline_svg, roofline_tex

    suffix = Path(path).suffix.lower()
    if suffix not in (".tex", ".svg"):
        raise SymgptError(f"--figure writes .tex or .svg, got {Path(path).name[:60]!r}")
    r = roofline(m, **options)
    write_atomic(path, roofline_tex(m.name, r) if suffix == ".tex" else roofline_svg(m.name, r))
