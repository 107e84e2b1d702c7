"""Options shared by ``symgpt flops``, ``memory`` and ``time``, and their human output."""

from __future__ import annotations

from . import choices
from .args import positive_int
from .common import add_json, add_model, load_model


def add_convention(p) -> None:
    add_model(p)
    add_json(p)
    p.add_argument("--convention", default="default", metavar="NAME",
                   help="counting convention: " + choices.listed(choices.CONVENTIONS) + " (default: default)")
    p.add_argument("--recompute", choices=choices.RECOMPUTE,
                   help="activation recomputation (default: the convention's)")


def add_flops(p) -> None:
    p.add_argument("--per", choices=choices.PER,
                   help="FLOPs per batch (step), per sequence or per token (default: the convention's)")
    p.add_argument("--hfu", action="store_true", default=None,
                   help="count the forward that recomputation reruns in training FLOPs (hardware FLOPs, "
                   "as HFU counts them; default: model FLOPs, as MFU counts them)")
    p.add_argument("--causal", action="store_true", default=None,
                   help="halve the attention matmuls a causal kernel skips")
    p.add_argument("--attention", choices=choices.ATTENTION,
                   help="attention implementation (flash: the backward recomputes Q·Kᵀ, 2.5 × forward)")


def add_memory(p) -> None:
    p.add_argument("--precision", choices=choices.PRECISIONS,
                   help="precision policy (default: the convention's; default convention: fp32)")
    p.add_argument("--optimizer", default="adamw", choices=choices.OPTIMIZERS)
    p.add_argument("--attention", choices=choices.ATTENTION, help="attention implementation")
    p.add_argument("--dropout", action="store_true", default=None, help="dropout on (masks are saved)")
    p.add_argument("--implementation", choices=choices.IMPLEMENTATIONS,
                   help="whose code the saved tensors follow: fused kernels (the ideal), transformers' "
                        "eager modules, mamba-ssm's autograd Functions for Mamba mixers, or fla's "
                        "chunk_gated_delta_rule / chunk_kda and causal-conv1d's causal_conv1d_fn for Gated "
                        "DeltaNet, Kimi Delta Attention and short-convolution layers (both read from the "
                        "source, not measured) "
                        "(default: the convention's; pytorch-cpu: hf-eager)")
    add_parallel(p)


def add_memory_command(p) -> None:
    """The options of a per-device memory-layout command (``memory``, ``comm``)."""
    add_convention(p)
    add_memory(p)


def memory_quantities(args, names):
    """(model, options, quantities) of a ``add_memory_command`` command: *names* under its options."""
    m = load_model(args)
    opts = memory_options(args)
    return m, opts, [m.quantity(n, **opts) for n in names]


def add_parallel(p) -> None:
    """Data, tensor, sequence, pipeline, context and expert parallelism (per-device figures)."""
    p.add_argument("--zero", type=int, default=0, choices=choices.ZERO_STAGES, help="ZeRO stage (per-device memory)")
    p.add_argument("--dp", type=positive_int, default=1, metavar="N", help="data-parallel ranks (for ZeRO)")
    p.add_argument("--tp", type=positive_int, default=1, metavar="N", help="tensor-parallel ranks")
    p.add_argument("--sp", action="store_true", help="sequence parallelism (with --tp)")
    add_layout(p)


def add_layout(p) -> None:
    """Pipeline, context and expert parallelism, and where the optimizer states live."""
    p.add_argument("--pp", type=positive_int, default=1, metavar="N", help="pipeline stages")
    p.add_argument("--vp", type=positive_int, default=1, metavar="V",
                   help="virtual stages per device (the interleaved 1F1B schedule, with --pp)")
    p.add_argument("--microbatches", type=positive_int, default=1, metavar="M",
                   help="micro-batches per step (B is the micro-batch size)")
    p.add_argument("--schedule", choices=choices.SCHEDULES, default="1f1b",
                   help="pipeline schedule (default 1f1b; --vp > 1 interleaves it; zb-h1 and zb-h2 split the "
                        "backward, Qi et al. 2023; dualpipe, DeepSeek-V3: memory, not its communication or step)")
    p.add_argument("--stage", choices=choices.STAGES, default="first",
                   help="the pipeline stage whose device is sized (default first: the most activations)")
    p.add_argument("--ep", type=positive_int, default=1, metavar="N",
                   help="expert-parallel ranks (taken from the data-parallel ranks)")
    p.add_argument("--cp", type=positive_int, default=1, metavar="N", help="context-parallel ranks (T split)")
    p.add_argument("--distributed-optimizer", action="store_true",
                   help="shard the optimizer states over the data-parallel ranks (Megatron-LM; as ZeRO-1)")
    # offloading to host memory: what (repeatable), a bare --offload the optimizer
    p.add_argument("--offload", nargs="?", action="append", const="optimizer", choices=choices.OFFLOAD, metavar="WHAT",
                   help="move to host memory (repeatable): optimizer (the default of a bare --offload: optimizer "
                        "states and fp32 master copy, ZeRO-Offload) or activations (the saved activations of "
                        "every layer but the two in flight)")
    # MoE load imbalance: the busiest expert-parallel rank and the experts' capacity
    p.add_argument("--imbalance", metavar="X",
                   help="MoE: routed token copies the busiest expert-parallel rank receives over the balanced "
                        "share, 1..ep (default 1: balanced routing)")
    p.add_argument("--capacity-factor", metavar="C",
                   help="MoE: each expert takes at most C·k·tokens/E token copies (Switch Transformer); the rest "
                        "are dropped (moe.dropped)")


def flops_options(args) -> dict:
    out = {"convention": args.convention, "recompute": args.recompute, "per": args.per,
           "hardware": args.hfu, "attention": args.attention}
    if getattr(args, "causal", None):
        out["causal_halving"] = True
    return {k: v for k, v in out.items() if v is not None}


def add_cluster(p) -> None:
    """The cluster a step runs on (a ``--hardware NAME`` profile fills what is not given)."""
    p.add_argument("--link-bandwidth", metavar="B/S",
                   help="bytes/s each device sends inside a node (e.g. 450e9 for NVLink 4)")
    p.add_argument("--node-bandwidth", metavar="B/S",
                   help="bytes/s each device sends between nodes (e.g. 50e9 for 400 Gb/s InfiniBand)")
    p.add_argument("--node-size", type=positive_int, default=None, metavar="N",
                   help="devices per node (default: the profile's, else 8)")
    p.add_argument("--overlap-dp", action="store_true",
                   help="the data-parallel collectives hide behind backward (not in the step time)")


def cluster_options(args, given: dict) -> dict:
    """The step-time options of the cluster: the bandwidths and node size in *given* (the
    flags, else the profile's: ``machine.machine(...).values``) and --overlap-dp."""
    out = {k: given[k] for k in ("link_bandwidth", "node_bandwidth", "node_size") if k in given}
    if args.overlap_dp:
        out["overlap_dp"] = True
    return out


def memory_options(args) -> dict:
    out = {"convention": args.convention, "recompute": args.recompute, "precision": args.precision,
           "optimizer": args.optimizer, "attention": args.attention, "dropout": args.dropout,
           "implementation": getattr(args, "implementation", None),
           "zero": args.zero, "dp": args.dp, "tp": args.tp, "sp": args.sp or None}
    out.update(layout_options(args))
    return {k: v for k, v in out.items() if v is not None}


def layout_options(args) -> dict:
    """The layout flags that differ from their defaults (so the options stay short)."""
    defaults = {"pp": 1, "vp": 1, "microbatches": 1, "schedule": "1f1b", "stage": "first", "ep": 1, "cp": 1,
                "distributed_optimizer": False}
    out = {k: getattr(args, k) for k, d in defaults.items() if getattr(args, k, d) != d}
    for k, flag in (("imbalance", "--imbalance"), ("capacity_factor", "--capacity-factor")):  # MoE load
        if getattr(args, k, None) is not None:
            from .args import number

            out[k] = number(getattr(args, k), flag)
    if getattr(args, "offload", None):  # what --offload moves to host memory -> its layout field
        from ..derive.layout import OFFLOAD

        out.update({OFFLOAD[w]: True for w in dict.fromkeys(args.offload)})
    return out


def unbound_hint(m, quantities) -> str:
    """A line saying which symbols are free and how to bind them ('' when all are bound)."""
    free = sorted({s.name for q in quantities for s in q.expr.free_symbols} - set(m.sizes))
    if not free:
        return ""
    example = " ".join(f"--set {n}={ {'B': 8, 'T': 1024}.get(n, 'N') }" for n in free)
    return f"unbound: {', '.join(free)} -- the formulas above are symbolic; bind with {example}"


def payload(m, conv_label: str, options: dict, quantities) -> dict:
    from ..render.jsonout import model_json, quantity_json

    out = {**model_json(m), "convention": conv_label,
           "options": {k: v for k, v in options.items() if k != "convention"}}
    for q in quantities:
        out[q.name] = quantity_json(q)
    return out


# --- parameter-efficient fine-tuning (derive.finetune) --------------------------------------------
def add_finetune(p) -> None:
    """--finetune and the LoRA options (``params``, ``flops``, ``memory``)."""
    # (read from the engine when a value is parsed, so that --help stays light)
    p.add_argument("--finetune", type=choices.FINETUNE.parse, default=None, metavar="METHOD",
                   help="what is trained: every parameter (full), or low-rank adapters on a frozen base: "
                        "lora (Hu et al. 2021), dora (Liu et al. 2024), qlora (Dettmers "
                        "et al. 2023: the frozen projections stored in 4-bit NF4)")
    p.add_argument("--lora-rank", type=positive_int, default=None, metavar="R", help="adapter rank (default 8)")
    p.add_argument("--lora-targets", default=None, metavar="LIST",
                   help="the projections adapted, by role: q,k,v,o,gate,up,down or all-linear (default)")
    p.add_argument("--lora-alpha", default=None, metavar="A",
                   help="the adapter scale alpha/r (accepted; it costs nothing)")
    p.add_argument("--lora-dropout", default=None, metavar="P",
                   help="dropout on each adapter's input (peft's lora_dropout; default 0): its masks are saved")
    p.add_argument("--lora-train", default=None, metavar="LIST",
                   help="also train whole: embedding and/or head (their own weights unfrozen)")
    p.add_argument("--qlora-base", type=choices.QLORA_BASES.parse, default=None, metavar="BASE",
                   help="QLoRA's frozen storage: nf4 (default; 4-bit NormalFloat, double-quantized scales) "
                        "or int8 (LLM.int8)")
    from .freezeargs import add_freeze

    add_freeze(p)


_LORA_FLAGS = ("lora_rank", "lora_targets", "lora_alpha", "lora_dropout", "lora_train", "qlora_base")


def finetune_given(args) -> bool:
    """Whether --finetune or any LoRA option is on the command line."""
    return any(getattr(args, f, None) is not None for f in ("finetune", "freeze", *_LORA_FLAGS))


def finetune_model(args, m):
    """*m* rewritten for the command's --finetune (itself without one), then with the parts
    --freeze names frozen (``cli.freezeargs``)."""
    from .freezeargs import freeze_model

    return freeze_model(args, _finetune_model(args, m))


def _finetune_model(args, m):
    """*m* rewritten for the command's --finetune (itself without one); the LoRA options without
    --finetune are refused."""
    from ..core.errors import SymgptError

    method = getattr(args, "finetune", None)
    given = [f for f in _LORA_FLAGS if getattr(args, f, None) is not None]
    if method is None:
        if given:
            raise SymgptError(f"--{given[0].replace('_', '-')} needs --finetune lora, dora or qlora")
        return m
    if method == "full" and given:
        raise SymgptError(f"--{given[0].replace('_', '-')} has no effect with --finetune full")
    if args.qlora_base is not None and method != "qlora":
        raise SymgptError("--qlora-base needs --finetune qlora")
    from ..derive.finetune import FineTune, apply

    alpha = None
    if args.lora_alpha is not None:
        from .args import number

        try:
            alpha = number(args.lora_alpha, "--lora-alpha")
        except SymgptError as e:
            raise SymgptError(f"--lora-alpha must be a positive number ({e})") from None
    dropout = None
    if args.lora_dropout is not None:
        from ..core.exprparse import parse_expression

        try:
            dropout = parse_expression(args.lora_dropout, names={})
        except SymgptError:
            dropout = None
        if dropout is None or not dropout.is_Rational or not 0 <= dropout < 1:
            raise SymgptError(f"--lora-dropout must be a number in [0, 1), got {args.lora_dropout!r}")
    ft = FineTune.parse(method, args.lora_rank, args.lora_targets, alpha, args.lora_train, args.qlora_base,
                        dropout)
    return apply(m, ft)


def finetune_json(m) -> dict:
    """``params.trainable`` and ``params.frozen`` of a fine-tuned model, for --json."""
    from ..derive.finetune import ALL_LINEAR
    from ..render.jsonout import quantity_json

    out = {}
    frozen = m.arch.flags.get("freeze")
    if frozen is not None:  # derive.freeze
        out["freeze"] = {"parts": list(frozen[0].parts), "modules": {p: list(v) for p, v in frozen[1].items()},
                         "note": frozen[0].describe(frozen[1])}
    ft = m.arch.flags.get("finetune")
    if ft is not None:
        out["finetune"] = {"method": ft.method, "rank": ft.rank,
                           "targets": "all-linear" if ft.targets == ALL_LINEAR else list(ft.targets),
                           "alpha": None if ft.alpha is None else str(ft.alpha), "dropout": str(ft.dropout),
                           "train": list(ft.train), **({"base": ft.base} if ft.method == "qlora" else {}),
                           "note": ft.describe()}
    return {**out, **{n: quantity_json(m.quantity(n)) for n in ("params.trainable", "params.frozen")}}
