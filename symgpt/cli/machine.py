"""The machine a command prices time on (``symgpt time``, ``symgpt plan``): ``--hardware NAME``,
a profile of ``symgpt hardware`` (datasheet figures), and the direct flags that override it,
each number kept with where it came from."""

from __future__ import annotations

from typing import NamedTuple

#: (key, flag) of the numbers a profile fills, in the order they are printed
KEYS = (("peak", "--peak"), ("device_memory", "--device-memory"), ("link_bandwidth", "--link-bandwidth"),
        ("node_bandwidth", "--node-bandwidth"), ("node_size", "--node-size"),
        # a precision recipe's low-precision GEMMs (fp8, fp4): the device's peak in that dtype
        ("low_peak", "--low-precision-peak"))


class Machine(NamedTuple):
    values: dict        # key -> exact number (SymPy Integer/Rational; node_size an int)
    sources: dict       # key -> "--flag" or the profile's name
    profile: object     # the ``hardware.Hardware`` of --hardware, or None
    dtype: str          # the dtype whose peak the profile gave


def dtype(precision: str) -> str:
    """The dtype of the matmuls under a precision policy (whose peak a profile gives)."""
    return "fp32" if precision == "fp32" else ("fp16" if "fp16" in precision else "bf16")


def low_dtype(precision: str) -> str:
    """The dtype of a precision recipe's low-precision GEMMs ('' for a plain policy)."""
    from ..derive.options import PRECISIONS

    p = PRECISIONS.get(precision)
    return p.gemm_dtype if p is not None else ""


def add_low_peak(p) -> None:
    """``--low-precision-peak``: the FLOP/s of a precision recipe's low-precision GEMMs."""
    p.add_argument("--low-precision-peak", dest="low_peak", metavar="FLOP/S",
                   help="FLOP/s of one device in the dtype a precision recipe runs its linears' GEMMs in (fp8 for "
                        "fp8-deepseek-v3 and mxfp8, fp4 for mxfp4; default: the --hardware profile's)")


def machine(args, precision: str) -> Machine:
    """The numbers given by flag, and where a flag is missing, ``--hardware``'s datasheet figure."""
    import sympy

    from .args import number

    hw, profile = None, {}
    if getattr(args, "hardware", None) is not None:
        from ..core.hardware import hardware

        hw = hardware(args.hardware)
        profile = {"device_memory": hw.memory, "peak": hw.peak(dtype(precision)), "link_bandwidth": hw.link_bandwidth,
                   "node_bandwidth": hw.node_bandwidth, "node_size": hw.devices_per_node}
        low = low_dtype(precision)
        if low and getattr(args, "low_peak", None) is None:
            if low not in hw.peaks:
                from ..core.errors import SymgptError

                raise SymgptError(f"precision {precision} runs the linears' GEMMs in {low}: {hw.name}'s datasheet "
                                  f"gives no {low} peak (it has {', '.join(hw.peaks)}); give --low-precision-peak")
            profile["low_peak"] = hw.peaks[low]
    values, sources = {}, {}
    for key, flag in KEYS:
        given = getattr(args, key, None)
        if given is not None:
            values[key] = given if isinstance(given, int) else number(given, flag)
            sources[key] = flag
        elif profile.get(key) is not None:
            values[key] = profile[key] if key == "node_size" else sympy.Integer(profile[key])
            sources[key] = hw.name
    return Machine(values, sources, hw, dtype(precision))


def shown(mach: Machine) -> dict:
    """The machine for ``--json``: each number as text with its source."""
    out = {k: {"value": str(v), "source": mach.sources[k]} for k, v in mach.values.items()}
    if mach.profile is not None:
        out["profile"] = {"name": mach.profile.name, "title": mach.profile.title, "source": mach.profile.source,
                          "peak_dtype": mach.dtype}
    return out


def device_options(args) -> dict:
    """The device options ``symgpt infer`` and ``symgpt serve`` share, as ``inference.*`` takes
    them: --hardware, the numbers that override it, --chips, the weight group size, the KV-cache
    bits and fp8 matmuls (each only where given)."""
    from .args import integer, number

    out = {}
    if args.hardware:
        out["hardware"] = args.hardware
    for key in ("peak", "bandwidth", "device_memory", "link_bandwidth"):
        text = getattr(args, key)
        if text is not None:
            out[key] = number(text, "--" + key.replace("_", "-"))
    chips = integer(args.chips, "--chips")
    if chips > 1:
        out["chips"] = chips
    if args.group_size is not None:
        out["group_size"] = integer(args.group_size, "--group-size")
    if args.kv_bits is not None:
        out["kv_bits"] = args.kv_bits
    if args.fp8:
        out["fp8"] = True
    return out
