"""symgpt plan MODEL --devices N --global-batch G: every (tp, pp, dp, cp, ep, micro-batch, vp,
recompute, ZeRO, SP) that divides the model and fits in device memory, ranked by step time."""

from __future__ import annotations

from .common import add_json, add_model, emit, load_model
from .args import add_hardware, comma_list, number, path, positive_int
from . import choices

HELP = "the fastest ways to train a model on N devices (parallel strategies ranked by step time)"


def add_arguments(p):
    add_model(p)
    add_json(p)
    p.add_argument("--devices", type=positive_int, required=True, metavar="N", help="devices in the cluster")
    p.add_argument("--global-batch", type=positive_int, required=True, metavar="G", help="sequences per step")
    add_hardware(p, "--device-memory, --peak, --link-bandwidth, --node-bandwidth and --node-size")
    from .machine import add_low_peak

    add_low_peak(p)
    p.add_argument("--device-memory", metavar="BYTES", help="memory of one device (e.g. 80e9)")
    p.add_argument("--peak", metavar="FLOP/S", help="peak FLOP/s of one device (e.g. 989e12)")
    p.add_argument("--efficiency", default="1", metavar="X", help="fraction of peak the kernels reach (default 1)")
    p.add_argument("--link-bandwidth", metavar="B/S", help="bytes/s per device inside a node")
    p.add_argument("--node-bandwidth", metavar="B/S", help="bytes/s per device between nodes")
    p.add_argument("--node-size", type=positive_int, default=None, metavar="N",
                   help="devices per node (default: the profile's, else 8)")
    p.add_argument("--tokens", metavar="D", help="training tokens: also the time to train")
    p.add_argument("--precision", default="mixed-bf16",
                   choices=choices.PRECISIONS)
    p.add_argument("--optimizer", default="adamw", choices=choices.OPTIMIZERS)
    p.add_argument("--recompute", type=comma_list(str, ("none", "selective", "full")),
                   default=("none", "selective", "full"),
                   metavar="LIST", help="recomputation policies to try (default none,selective,full)")
    p.add_argument("--zero", type=comma_list(int, (0, 1, 2, 3)), default=(1,), metavar="LIST",
                   help="ZeRO stages to try (default 1: the distributed optimizer)")
    p.add_argument("--vp", type=comma_list(int), default=(1, 2), metavar="LIST",
                   help="virtual stages to try (default 1,2)")
    # pipeline schedules beyond 1F1B: searched only when listed
    p.add_argument("--schedule", type=comma_list(str, ("1f1b", "gpipe", "zb-h1", "zb-h2", "dualpipe")),
                   default=("1f1b",), metavar="LIST",
                   help="pipeline schedules to try, of 1f1b, gpipe, zb-h1, zb-h2, dualpipe (default 1f1b; "
                        "--vp interleaves 1f1b)")
    p.add_argument("--microbatch", type=comma_list(int), default=(1, 2, 4, 8), metavar="LIST",
                   help="micro-batch sizes to try (default 1,2,4,8)")
    p.add_argument("--max-cp", type=positive_int, default=8, metavar="N",
                   help="largest context-parallel degree (default 8)")
    p.add_argument("--top", type=positive_int, default=10, metavar="K", help="strategies shown (default 10)")
    p.add_argument("--figure", dest="output", metavar="FILE.svg",
                   help="also draw the per-device memory of the strategies shown as a stacked bar (SVG)")
    # fine-tuning: --finetune full is the plan itself; adapters are planned with tp = cp = ep = 1
    from .costargs import add_finetune

    add_finetune(p)


def machine(args):
    """The cluster's machine: the direct flags, and where one is missing, the ``--hardware``
    profile's datasheet figure (the peak in the dtype of the precision's matmuls)."""
    from ..core.errors import SymgptError
    from ..derive.options import DEFAULT_NODE_SIZE, Machine
    from . import machine as mach

    given = mach.machine(args, args.precision).values
    for key in ("device_memory", "peak", "link_bandwidth", "node_bandwidth"):
        if key not in given:
            flag = "--" + key.replace("_", "-")
            why = f" ({args.hardware}'s datasheet gives none)" if args.hardware else " (or --hardware NAME)"
            raise SymgptError(f"plan needs {flag}{why}")
    return Machine(**{**given, "node_size": given.get("node_size", DEFAULT_NODE_SIZE)})


def run(args) -> int:
    from ..derive.options import Training
    from ..derive.steptime import Cluster
    from ..render.cluster_text import plan_text
    from ..render.jsonout import dumps
    from ..sweep.plan import Search, plan

    from .costargs import finetune_model

    m = finetune_model(args, load_model(args))  # fine-tuning: the base frozen, adapters trained
    search = Search(recompute=args.recompute, zero=args.zero, sp=(False, True), vps=args.vp,
                    microbatch_sizes=args.microbatch, max_cp=args.max_cp, schedules=tuple(args.schedule))
    tokens = number(args.tokens, "--tokens") if args.tokens else None
    cluster = Cluster(machine(args), number(args.efficiency, "--efficiency"),
                      training=Training(precision=args.precision, optimizer=args.optimizer))
    r = plan(m, args.devices, args.global_batch, cluster, search, tokens, top=args.top, parts=bool(args.output))
    if args.output:
        from ..core.io import write_atomic
        from ..render.cluster_fig import memory_bars_svg

        write_atomic(path(args.output), memory_bars_svg(r.rows, f"{m.name} on {r.devices} devices: memory per device"))
    if args.json:
        keys = ("tp", "pp", "dp", "ep", "cp", "microbatch", "microbatches", "vp", "schedule", "recompute", "zero", "sp",
                "memory", "comm_bytes", "bubble", "time", "mfu", "train_seconds")
        rows = [{k: (str(r_[k]) if k in ("memory", "comm_bytes", "bubble", "time", "mfu", "train_seconds") else r_[k])
                 for k in keys if k in r_} for r_ in r.rows]
        emit(dumps({"model": m.name, "devices": r.devices, "global_batch": r.global_batch, "T": r.T,
                    "considered": r.considered, "fitting": r.fitting, "notes": r.notes, "strategies": rows}))
        return 0
    emit(plan_text(m, r, args.top))
    return 0
