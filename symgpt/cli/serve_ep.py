"""``symgpt serve --ep N --dp-attention N``: a mixture of experts served with expert parallelism
and data-parallel attention (symgpt.derive.serving_ep), beside the tensor parallelism of
``--chips``."""

from __future__ import annotations

import dataclasses

#: the options of serve that the expert-parallel answer does not price (refused with it)
UNPRICED = (("draft", "--draft"), ("prefix", "--prefix"), ("price_per_hour", "--price-per-hour"),
            ("disaggregate", "--disaggregate"), ("trace", "--trace"), ("requests", "--requests"))


def add_arguments(p) -> None:
    from .choices import DISPATCH_BITS

    p.add_argument("--ep", metavar="N",
                   help="expert parallelism: the routed experts split over N devices, the instance's devices "
                        "(--chips x --dp-attention = N); per-device weights, KV capacity, the decode step with "
                        "its all-to-all (DeepSeek-V3 Sec. 3.4)")
    p.add_argument("--dp-attention", metavar="N",
                   help="data-parallel attention ranks of --chips tensor-parallel devices each (with --ep; "
                        "default --ep / --chips)")
    p.add_argument("--redundant-experts", metavar="R", default="0",
                   help="extra expert slots holding copies of high-load experts (with --ep; default 0; "
                        "DeepSeek-V3's prefill: 32); --ep must divide E + R")
    p.add_argument("--dispatch-bits", type=int, choices=DISPATCH_BITS, default=8,
                   help="bits of a dispatched token element (with --ep; default 8: DeepSeek-V3's FP8 dispatch "
                        "with a float32 scale per 128 elements; the combine is BF16)")
    p.add_argument("--imbalance", metavar="X",
                   help="token copies the busiest device receives over the balanced share, 1..--ep (with --ep; "
                        "default 1: balanced routing)")
    p.add_argument("--ep-bandwidth", metavar="BYTES/S",
                   help="bytes/s per device per direction of the all-to-all (with --ep; default: the profile's "
                        "NVLink within a node, its network card beyond)")


def wanted(args) -> bool:
    from ..core.errors import SymgptError

    given = [f for f, v in (("--dp-attention", args.dp_attention), ("--ep-bandwidth", args.ep_bandwidth),
                            ("--imbalance", args.imbalance),
                            ("--redundant-experts", None if args.redundant_experts == "0" else 1),
                            ("--dispatch-bits", None if args.dispatch_bits == 8 else 1)) if v is not None]
    if args.ep is None:
        if given:
            raise SymgptError(f"{given[0]} goes with --ep N")
        return False
    clash = [flag for key, flag in UNPRICED if getattr(args, key, None) not in (None, False)]
    if clash:
        raise SymgptError(f"--ep prices capacity and the decode step; {clash[0]} is not priced with it")
    return True


def quantities(args, m, opts, cap, block, notes) -> list:
    """The expert-parallel answer: per-device bytes of a block and a sequence, weights, KV budget,
    sequences per DP rank and per instance; with the context and the device's speed, the
    all-to-all bytes and the decode step of the busiest device."""
    from ..core.errors import SymgptError
    from ..core.hardware import hardware
    from ..core.symbols import B
    from ..derive import serving, serving_ep
    from ..derive.step import generated
    from .args import integer, number

    ep = integer(args.ep, "--ep")
    tp = int(opts.get("chips", 1))
    if args.dp_attention is not None:
        dp = integer(args.dp_attention, "--dp-attention")
    elif ep % tp:
        raise SymgptError(f"--ep {ep} is not a multiple of --chips {tp}: give --dp-attention")
    else:
        dp = ep // tp
    red = args.redundant_experts.strip()
    if not red.isdigit() or len(red) > 12:
        raise SymgptError(f"--redundant-experts takes a whole number >= 0, got {red[:40]!r}")
    hw = hardware(opts["hardware"]) if "hardware" in opts else None
    x = 1 if args.imbalance is None else number(args.imbalance, "--imbalance")
    d = serving_ep.deployment(m, ep, dp, tp, int(red), hw.devices_per_node if hw is not None else None, x)
    if "hardware" not in opts and "device_memory" not in opts:
        raise SymgptError("--ep sizes each device: give --hardware NAME or --device-memory BYTES")
    qs = [serving.block_bytes(m, block, **opts), serving.kv_per_sequence(m, block, **opts),
          serving_ep.weights(m, d, **opts), serving_ep.kv_budget(m, d, cap["utilization"], cap["workspace_tokens"],
                                                                 **opts)]
    qs += serving_ep.max_sequences(m, d, cap["utilization"], cap["workspace_tokens"], block, **opts)
    if m.bindings.get(generated(m.arch)) is None:
        return qs
    if "hardware" not in opts and not {"peak", "bandwidth"} <= set(opts):
        return qs
    batch = m.bindings.get(B)
    if batch is None:
        batch = qs[4].value
        if batch is None or batch < 1:
            raise SymgptError("no sequence of this length fits on a DP rank: no batch to price")
        notes.append(f"batch B = {batch} per DP rank: the sequences that fit (serving.ep.max_sequences_per_rank); "
                     "--set B=N to choose")
    bw, link = _bandwidth(args, d, hw, opts, number)
    d = dataclasses.replace(d, link=link)
    qs.append(serving_ep.all_to_all(m, d, int(batch), args.dispatch_bits, **opts))
    qs.append(serving_ep.decode_step(m, d, int(batch), bw, args.dispatch_bits, **opts))
    return qs


def shown(args, opts) -> dict:
    """The deployment for --json."""
    tp = int(opts.get("chips", 1))
    ep = int(args.ep)
    return {"ep": ep, "dp_attention": int(args.dp_attention) if args.dp_attention is not None else ep // tp,
            "redundant_experts": int(args.redundant_experts), "dispatch_bits": args.dispatch_bits,
            "imbalance": "1" if args.imbalance is None else str(args.imbalance)}


def _bandwidth(args, d, hw, opts, number):
    from ..core.errors import SymgptError

    if args.ep_bandwidth is not None:
        return number(args.ep_bandwidth, "--ep-bandwidth"), "given"
    if d.link == "nvlink":
        if "link_bandwidth" in opts:
            return opts["link_bandwidth"], d.link
        if hw is not None:
            import sympy

            return sympy.Integer(hw.link_bandwidth), d.link
        raise SymgptError("the all-to-all needs its link: give --ep-bandwidth BYTES/S (or --hardware NAME)")
    if hw.node_bandwidth is None:
        raise SymgptError(f"--ep {d.ep} spans nodes of {hw.devices_per_node}: {hw.name} names no network per device; "
                          "give --ep-bandwidth BYTES/S")
    import sympy

    return sympy.Integer(hw.node_bandwidth), d.link
