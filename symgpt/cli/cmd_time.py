"""symgpt time MODEL: step time and tokens/s at a peak FLOP/s and MFU, MFU from a measured step
time, training time for D tokens, and the initial loss ln V. With a parallel layout or
bandwidths: the step on a cluster, compute + exposed communication + pipeline bubble, MFU, HFU,
time to train and device-hours."""

from __future__ import annotations

from .common import emit, load_model
from . import choices
from .args import add_hardware, number
from .costargs import (add_cluster, add_convention, add_flops, add_parallel, cluster_options, flops_options,
                       payload, unbound_hint)

HELP = "step time, tokens/s, MFU, training time for D tokens and the initial loss ln V"


def add_arguments(p):
    add_convention(p)
    add_flops(p)
    p.add_argument("--peak", metavar="FLOP/S",
                   help="peak FLOP/s of one accelerator (default: the --hardware profile's, else 300e12, "
                   "the A100's bf16 figure)")
    p.add_argument("--mfu", default="1", metavar="X",
                   help="model FLOPs utilisation in (0, 1] (default 1); on a cluster: the efficiency "
                   "of the compute kernels")
    p.add_argument("--measured", metavar="SECONDS", help="a measured step time: report its MFU")
    p.add_argument("--tokens", metavar="D", help="training tokens D: report the training time")
    p.add_argument("--precision", choices=choices.PRECISIONS,
                   help="precision policy (the bytes communicated; the dtype of a profile's peak)")
    add_parallel(p)
    add_hardware(p, "--peak, --device-memory, --link-bandwidth, --node-bandwidth and --node-size")
    from .machine import add_low_peak

    add_low_peak(p)
    p.add_argument("--device-memory", metavar="BYTES",
                   help="memory of one device (e.g. 80e9): the memory per device is shown against it")
    # offloading to host memory: the host link
    p.add_argument("--host-bandwidth", metavar="B/S",
                   help="bytes/s per direction of each device's host link (PCIe) that --offload crosses")
    p.add_argument("--overlap-offload", action="store_true",
                   help="the host-link transfers of --offload hide behind compute: the step takes the larger "
                        "(default: added to it)")
    add_cluster(p)
    from .costargs import add_finetune

    add_finetune(p)


def _cluster(args, opts: dict, mach, peak, mfu):
    """The cluster the step is priced on, made once here: (the options shown by --json, the
    ``derive.steptime.Cluster`` made from them), or None for one device. The rule: a cluster
    when a layout flag differs from one device (--dp, --tp, --zero, --sp, --pp, ...), or
    --precision, a bandwidth flag, --node-size or --overlap-dp is given; then with the
    bandwidths and node size given or the profile's, the peak, and --mfu as the kernels'
    efficiency."""
    from ..derive.steptime import Cluster
    from .costargs import layout_options

    out = {k: v for k, v in (("dp", args.dp), ("tp", args.tp), ("zero", args.zero)) if v not in (1, 0)}
    if args.sp:
        out["sp"] = True
    if args.precision:
        out["precision"] = args.precision
    out.update(layout_options(args))
    flags = any(getattr(args, k) is not None for k in ("link_bandwidth", "node_bandwidth", "node_size"))
    if not (out or flags or args.overlap_dp):
        return None
    o = {**opts, **out, **cluster_options(args, mach.values), "peak": peak, "efficiency": mfu}
    if "low_peak" in mach.values:  # a precision recipe's low-precision GEMMs
        o["low_peak"] = mach.values["low_peak"]
    if args.host_bandwidth is not None:
        o["host_bandwidth"] = number(args.host_bandwidth, "--host-bandwidth")
    if args.overlap_offload:
        o["overlap_offload"] = True
    o.pop("hardware", None)  # compute time counts hardware FLOPs; MFU and HFU both shown
    return o, Cluster.from_options(**o)


def run(args) -> int:
    from ..core.conventions import convention
    from ..derive.checks import DEFAULT_PEAK
    from ..render.costs_text import time_text
    from ..render.jsonout import dumps
    from .machine import machine

    from .costargs import finetune_model

    m = finetune_model(args, load_model(args))
    opts = flops_options(args)
    opts.pop("per", None)
    mach = machine(args, args.precision or convention(args.convention).precision)
    peak, mfu = mach.values.get("peak", DEFAULT_PEAK), number(args.mfu, "--mfu")
    cluster = _cluster(args, opts, mach, peak, mfu)
    if cluster is not None:
        if args.measured:
            from ..core.errors import SymgptError

            raise SymgptError("--measured gives one device's MFU; on a cluster, time reports MFU and HFU itself")
        return _on_cluster(args, m, *cluster, mach)
    qs = [m.quantity("time.step", peak=peak, mfu=mfu, **opts),
          m.quantity("time.throughput", peak=peak, mfu=mfu, **opts)]
    if args.measured:
        qs.append(m.quantity("time.mfu", measured=number(args.measured, "--measured"), peak=peak, **opts))
    if args.tokens:
        qs.append(m.quantity("time.training", tokens=number(args.tokens, "--tokens"), peak=peak, mfu=mfu, **opts))
    qs.append(m.quantity("loss.initial"))
    memory = _memory(args, m, opts, mach)
    if args.json:
        out = payload(m, qs[0].convention, {**opts, "peak": str(peak), "mfu": str(mfu)}, qs)
        if args.finetune is not None or args.freeze is not None:
            from .costargs import finetune_json

            out.update(finetune_json(m))
        emit(dumps(_with_machine(out, mach, memory)))
        return 0
    emit(time_text(m, qs, peak, mfu, unbound_hint(m, qs)), fit=True)
    ft = m.arch.flags.get("finetune")
    if ft is not None:  # what is trained: the FLOPs and memory above follow from it
        emit(f"note: {ft.describe()}", fit=True)
    _machine_lines(mach, memory)
    return 0


def _memory(args, m, options, mach):
    """memory.total per device under the same layout, when the device's memory is known."""
    if "device_memory" not in mach.values:
        return None
    from ..derive.options import Machine, split
    from ..derive.steptime import Cluster

    _, o = split(options, Machine)  # the machine's and the cluster's own: not memory's
    _, o = split(o, Cluster)
    o = {k: v for k, v in o.items() if k not in ("hardware", "per")}  # FLOP-count choices
    if args.precision:
        o["precision"] = args.precision
    return m.quantity("memory.total", **o)


def _with_machine(out: dict, mach, memory) -> dict:
    from ..render.jsonout import quantity_json
    from .machine import shown

    if mach.values:
        out["machine"] = shown(mach)
    if memory is not None:
        out[memory.name] = quantity_json(memory)
    return out


def _machine_lines(mach, memory) -> None:
    from ..render.cluster_text import machine_text

    text = machine_text(mach.values, mach.sources, mach.profile, mach.dtype, memory)
    if text:
        emit(text)


def _on_cluster(args, m, o: dict, on, mach) -> int:
    """The step on the cluster *on* (made from the options *o* once), passed whole to every
    ``time.*`` quantity; *o* is what --json shows."""
    from ..core.errors import SymgptError
    from ..render.cluster_text import cluster_time_text
    from ..render.jsonout import dumps

    names = ["time.compute", "time.comm", "time.bubble", "time.step", "time.mfu_cluster", "time.hfu"]
    try:
        qs = [m.quantity(n, cluster=on) for n in names]
    except SymgptError as e:
        missing = [k for k in ("link_bandwidth", "node_bandwidth") if k not in o]
        if mach.profile is None or not missing:
            raise
        flags = " and ".join("--" + k.replace("_", "-") for k in missing)
        raise SymgptError(f"{e}; {mach.profile.name}'s datasheet gives no {flags.replace('--', '')}: give {flags}") from None
    if args.tokens:
        tokens = number(args.tokens, "--tokens")
        qs += [m.quantity("time.to_train", tokens=tokens, cluster=on),
               m.quantity("time.device_hours", tokens=tokens, cluster=on)]
    memory = _memory(args, m, o, mach)
    if args.json:
        shown = {k: (str(v) if not isinstance(v, (bool, int, str)) else v) for k, v in o.items()}
        out = payload(m, qs[0].convention, shown, qs)
        if args.finetune is not None or args.freeze is not None:
            from .costargs import finetune_json

            out.update(finetune_json(m))
        emit(dumps(_with_machine(out, mach, memory)))
        return 0
    emit(cluster_time_text(m, qs, unbound_hint(m, qs)))
    _stages_note(m, on, qs[3])
    ft = m.arch.flags.get("finetune")
    if ft is not None:  # fine-tuning: the data-parallel collectives carry the trainable parameters only
        emit(f"note: {ft.describe()}; the data-parallel collectives carry the trainable parameters' gradients "
             "(and, under ZeRO-1/2, their updated weights) only; under ZeRO-3 every weight, frozen ones included, is "
             "sharded and gathered for forward and for backward (the ZeRO paper's stage 3), the trainable gradients "
             "alone reduce-scattered (the backward gathers that FSDP's root unit and DeepSpeed's modules without a "
             "gradient to pass back skip: not modelled, counted)", fit=True)
    _machine_lines(mach, memory)
    return 0


def _stages_note(m, cluster, step) -> None:
    """On a pipeline, both end stages' steps: the MFU and the time to train use the slower."""
    lay = cluster.training.layout
    if lay.pp == 1 or step.value is None:
        return
    from ..derive.layout import larger_stage
    from ..derive.steptime import at_stage

    here = lay.stage
    other = "last" if here == "first" else "first"
    steps = {here: step.value, other: m.quantity("time.step", cluster=at_stage(cluster, other)).value}
    slower = larger_stage(steps["first"], steps["last"])
    emit(f"note: a pipeline's step ends with its slower stage: first {float(steps['first']) * 1000:.4g} ms, "
         f"last {float(steps['last']) * 1000:.4g} ms; time.mfu_cluster, time.hfu and time.to_train use the "
         f"{slower} stage's" + ("" if slower == here else f" (--stage {slower} prints its parts)"))
