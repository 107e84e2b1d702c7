"""symgpt serve MODEL: serving as vLLM runs it, in closed form -- paged-KV capacity, prefix
caching, speculative decoding, cost, energy and disaggregated prefill/decode (see
symgpt.derive.serving, serving_spec, serving_cost)."""

from __future__ import annotations

from .common import add_json, add_model, load_model
from .serve_output import write

HELP = "serving: paged-KV capacity, prefix caching, speculative decoding, cost and energy per token"
DESCRIPTION = HELP + (". Example: 'symgpt serve llama-7b --hardware h100-sxm --set T=4096 --prefix 1024'. "
                      "Capacity is vLLM's: blocks of --block-size tokens, --memory-utilization of the device "
                      "less the weights and an activation workspace; times are exact rooflines on the profile.")


#: the most draft tokens the best-gamma search and --gamma take, and the longest mean output
GAMMA_LIMIT = 256
GENERATE_LIMIT = 65536


def add_arguments(p):
    from . import choices

    add_model(p)
    add_json(p)
    p.add_argument("--hardware", choices=choices.HARDWARE, metavar="NAME",
                   help="an accelerator profile (see 'symgpt hardware')")
    p.add_argument("--peak", metavar="FLOP/S", help="peak FLOP/s of one device (overrides the profile's)")
    p.add_argument("--bandwidth", metavar="BYTES/S", help="memory bandwidth of one device")
    p.add_argument("--device-memory", metavar="BYTES", help="memory of one device")
    p.add_argument("--link-bandwidth", metavar="BYTES/S",
                   help="interconnect bandwidth per device per direction (for --chips)")
    p.add_argument("--chips", metavar="N", default="1", help="tensor-parallel devices per instance (default 1)")
    p.add_argument("--weight-bits", type=int, default=16, choices=choices.WEIGHT_BITS,
                   help="bits per weight of the dense matmuls (default 16)")
    p.add_argument("--group-size", metavar="N", help="a 16-bit scale per group of N quantized weights")
    p.add_argument("--kv-bits", type=int, choices=choices.WEIGHT_BITS, help="KV-cache bits (default: activations')")
    p.add_argument("--fp8", action="store_true", help="weights and activations in fp8 (the fp8 peak)")
    p.add_argument("--attention", default="flash", choices=choices.ATTENTION,
                   help="attention kernel of the step times (default flash, as serving engines run)")
    p.add_argument("--mla", default="expanded", choices=choices.MLA_FORMS,
                   help="multi-latent attention's decode step: expanded (default; transformers' "
                        "DeepseekV3Attention re-expands the cached latent) or absorbed (DeepSeek's inference: "
                        "W_UK and W_UV folded into the query and output, attention over the latent)")
    p.add_argument("--block-size", metavar="TOKENS", default="16",
                   help="tokens per KV-cache block (default 16, vLLM's)")
    p.add_argument("--memory-utilization", metavar="F", default="0.9",
                   help="fraction of device memory for weights, workspace and cache (default 0.9, vLLM's "
                        "gpu_memory_utilization)")
    p.add_argument("--workspace-tokens", metavar="N", default="2048",
                   help="the activation workspace is the largest activation of a prefill of N tokens (default 2048)")
    p.add_argument("--prefix", metavar="P", help="tokens of a prefix all sequences share (prefix caching)")
    p.add_argument("--draft", metavar="MODEL|mtp",
                   help="speculative decoding with a draft model (a preset or config) or 'mtp', the target's own "
                        "multi-token-prediction module (DeepSeek-V3)")
    p.add_argument("--gamma", metavar="G", help="draft tokens per verification (with --draft)")
    p.add_argument("--acceptance", metavar="A", help="acceptance rate of a draft token, in [0, 1) (with --draft)")
    p.add_argument("--gamma-max", metavar="N", default="16", help="the best-gamma search tries 1..N (default 16)")
    p.add_argument("--price-per-hour", metavar="DOLLARS", help="price of one device-hour: adds $ per million tokens")
    p.add_argument("--power-fraction", metavar="F", default="1",
                   help="board power drawn, as a fraction of the datasheet's maximum (default 1, an upper bound); "
                        "energy per token where the profile has a board power")
    p.add_argument("--disaggregate", action="store_true",
                   help="separate prefill and decode pools: KV bytes per request, transfer time, device ratio "
                        "(needs --prompt and --generate)")
    p.add_argument("--prompt", metavar="P", help="mean prompt tokens of the request mix (with --disaggregate)")
    p.add_argument("--generate", metavar="G", help="mean output tokens of the request mix (with --disaggregate)")
    # targets for disaggregated pools: the instances of each that meet them
    p.add_argument("--ttft", metavar="SECONDS",
                   help="mean time-to-first-token target (with --disaggregate and --tpot): the prefill pool as an "
                        "M/D/1 queue (DistServe); adds the rates and prefill instances per decode instance")
    p.add_argument("--tpot", metavar="SECONDS",
                   help="time-per-output-token target (with --disaggregate and --ttft): the largest decode batch "
                        "whose mean step meets it")
    add_simulation_arguments(p)
    # expert parallelism and data-parallel attention for a mixture of experts
    from . import serve_ep

    serve_ep.add_arguments(p)


# --- discrete-event simulation ---------------------------------------------------------------
def add_simulation_arguments(p) -> None:
    """The request-mix simulation's options (symgpt.simulate.command)."""
    from ..simulate import command
    from .choices import SIM_SCHEDULERS

    command.add_arguments(p)
    for action in p._actions:  # its fixed list read from the engine, as every CLI choice is
        if "--scheduler" in action.option_strings:
            action.choices = SIM_SCHEDULERS


def simulation(args, m, opts, qs, sized):
    """The simulation's result (a JSON-ready dict) when --trace or --requests asks for one, else
    None; the KV capacity in blocks is the closed form's: floor(KV budget / bytes per block)."""
    from ..simulate import command

    if not command.wants_simulation(args):
        return None
    blocks = None
    if sized:
        budget, per_block = qs[2].value, qs[0].value
        if budget is None or per_block is None:
            from ..core.errors import SymgptError

            raise SymgptError("the simulation needs the KV budget as a number: bind the model's sizes")
        blocks = max(0, int(budget // per_block))
    return command.run(m, args, opts, capacity_blocks=blocks)


def _fraction(text, what):
    from fractions import Fraction

    import sympy

    from ..core.errors import SymgptError

    try:
        v = sympy.Rational(Fraction(str(text).strip()))
    except (ValueError, ZeroDivisionError):
        raise SymgptError(f"{what} takes a number such as 0.9 or 9/10, got {str(text)[:40]!r}") from None
    if not 0 < v <= 1:
        raise SymgptError(f"{what} is a fraction in (0, 1], got {text}")
    return v


def _count(text, what, low=1) -> int:
    from ..core.errors import SymgptError

    t = str(text).strip()
    if not t.lstrip("-").isdigit() or len(t) > 40:
        raise SymgptError(f"{what} takes a whole number, got {t[:40]!r}")
    v = int(t)
    if v < low:
        raise SymgptError(f"{what} is an integer >= {low}, got {v}")
    return v


def options(args) -> dict:
    from .machine import device_options

    out = {"weight_bits": args.weight_bits, "attention": args.attention, **device_options(args)}
    if args.mla != "expanded":
        out["mla"] = args.mla
    return out


def run(args) -> int:
    from ..core.errors import SymgptError
    from ..derive import serving
    from ..derive.step import generated

    block = _count(args.block_size, "--block-size")
    util = _fraction(args.memory_utilization, "--memory-utilization")
    ws = _count(args.workspace_tokens, "--workspace-tokens")
    spec_args = (args.gamma, args.acceptance)
    if args.draft is None and any(a is not None for a in spec_args):
        raise SymgptError("--gamma and --acceptance go with --draft")
    if args.draft is not None and any(a is None for a in spec_args):
        raise SymgptError("--draft needs --gamma G and --acceptance A")
    if args.disaggregate != (args.prompt is not None and args.generate is not None) or (
            (args.prompt is None) != (args.generate is None)):
        raise SymgptError("--disaggregate goes with --prompt P and --generate G (the request mix's mean lengths)")
    if (args.ttft is None) != (args.tpot is None) or (args.ttft is not None and not args.disaggregate):
        raise SymgptError("--ttft and --tpot go together, with --disaggregate")
    from . import serve_ep

    ep = serve_ep.wanted(args)
    m = load_model(args)
    opts = options(args)
    T = generated(m.arch)
    t = m.bindings.get(T)
    cap = {"utilization": util, "workspace_tokens": ws, "block": block}
    extra = {"block_size": block, "memory_utilization": str(util), "workspace_tokens": ws}
    from ..derive.recurrent import recurrent_ops

    if recurrent_ops(m.arch):   # state slots beside the KV blocks: symgpt.cli.serve_state
        from . import serve_state

        return serve_state.run(args, m, opts, cap, block, extra, ep)
    if ep:
        notes = []
        qs = serve_ep.quantities(args, m, opts, cap, block, notes)
        return write(args, m, opts, qs, notes, None, {**extra, **serve_ep.shown(args, opts)}, "")
    prefix = _count(args.prefix, "--prefix", low=0) if args.prefix is not None else None
    sized = "hardware" in opts or "device_memory" in opts     # the device's memory is known
    held = _held(args, m)   # the model whose weights and cache the devices hold
    qs = [serving.block_bytes(held, block, **opts), serving.kv_per_sequence(held, block, **opts)]
    if sized:
        qs += [serving.kv_budget(held, **cap, **opts), serving.max_sequences(held, **cap, **opts)]
    if prefix is not None:
        qs.append(serving.prefix_saved(held, prefix, block, **opts))
        if sized:
            qs.append(serving.prefix_max_sequences(held, prefix, **cap, **opts))
    capacity = qs[3].value if sized else None
    notes, hint = [], "" if sized else "give --hardware NAME (or --device-memory BYTES) for the sequences that fit"
    if held is not m:
        notes.append(_mtp_note(m, held, opts))
    needs_t = args.draft or args.price_per_hour or args.disaggregate
    if t is None:
        hint = "; ".join(h for h in (hint, f"unbound: {T.name} -- bind --set {T.name}=N for the numbers") if h)
        if needs_t:
            raise SymgptError("speculative decoding, cost and disaggregation need the context length: "
                              f"--set {T.name}=N")
    else:
        qs += _timed(args, m, opts, block, capacity, notes)
    sim = simulation(args, m, opts, qs, sized)
    if prefix is not None:
        extra["prefix"] = prefix
    return write(args, m, opts, qs, notes, sim, extra, hint)


def _held(args, m):
    """The model the devices hold: with --draft mtp, the target with its multi-token-prediction
    module, whose weights and KV cache take memory beside the main model's."""
    if args.draft != "mtp":
        return m
    from ..derive import serving_spec

    return serving_spec.mtp_model(m)


def _mtp_note(m, held, opts) -> str:
    from ..derive.inference import weights

    extra = weights(held, **opts).expr - weights(m, **opts).expr
    return (f"--draft mtp: the capacity counts the multi-token-prediction module (DeepSeek-V3 Sec. 2.2): its weights "
            f"({extra.xreplace(dict(held.bindings))} bytes per device: its projection, norms and decoder layer; the "
            "embedding and output head shared with the main model as the report describes, held once -- the "
            "checkpoint's copies of them in its prediction layer are not counted) and its attention layer's KV "
            "cache, one more layer in every sequence's blocks")


def _timed(args, m, opts, block, capacity, notes) -> list:
    """The quantities that need step times: speculative decoding, cost, energy, disaggregation
    """
    from ..core.errors import SymgptError
    from ..core.symbols import B
    from ..derive import serving_cost, serving_spec
    from ..derive.serving import paged
    from ..derive.step import generated

    if "hardware" not in opts and not {"peak", "bandwidth"} <= set(opts):
        if args.draft or args.price_per_hour or args.disaggregate:
            raise SymgptError("step times need the device: give --hardware NAME (or --peak and --bandwidth)")
        return []
    T = int(m.bindings[generated(m.arch)])
    batch = m.bindings.get(B)
    if batch is None:
        if capacity is None or capacity < 1:
            raise SymgptError("no batch to price: --set B=N (or give the device's memory: the sequences that fit)"
                              if capacity is None else "no sequence of this length fits: no batch to price")
        batch = int(capacity)
        notes.append(f"batch B = {batch}: the sequences that fit (serving.max_sequences); --set B=N to choose")
    batch = int(batch)
    if capacity is not None and batch > capacity:
        notes.append(f"batch B = {batch} is more sequences than fit ({capacity}): the times below assume they do")
    timer = serving_spec.StepTimer(m, **opts)
    out = []
    if args.draft:
        out += _speculative(args, m, opts, timer, batch, T)
    if args.price_per_hour:
        out += serving_cost.cost(timer, batch, T, serving_cost.positive_rational(args.price_per_hour,
                                                                                   "--price-per-hour"))
    dev = timer.s.device
    if dev is not None and dev.board_power is not None:
        out += serving_cost.energy(timer, batch, T, _fraction(args.power_fraction, "--power-fraction"))
    elif args.power_fraction != "1":
        raise SymgptError("--power-fraction needs a profile with a board power (see symgpt.core.hardware)")
    if args.disaggregate:
        generate = _count(args.generate, "--generate", 2)
        if generate > GENERATE_LIMIT:
            raise SymgptError(f"--generate goes up to {GENERATE_LIMIT} tokens (each decode step is priced)")
        out += serving_cost.disaggregation(timer, paged(m, block, **opts), batch, _count(args.prompt, "--prompt"),
                                           generate)
        if args.ttft is not None:
            cap = batch if m.bindings.get(B) is not None or capacity is None else int(capacity)
            targets = serving_cost.disaggregation_targets(
                timer, cap, _count(args.prompt, "--prompt"), generate,
                serving_cost.positive_rational(args.ttft, "--ttft"), serving_cost.positive_rational(args.tpot, "--tpot"))
            out += targets
            # the percentiles of the prefill queue's TTFT at that rate (M/D/1, Erlang's distribution)
            from ..derive.serving_queue import ttft_percentiles

            prompt = _count(args.prompt, "--prompt")
            out += ttft_percentiles(targets[0].value, timer.seconds(1, prompt, 0), prompt)
    return out


def _speculative(args, m, opts, timer, batch, T) -> list:
    import sympy

    from ..core.errors import SymgptError
    from ..derive import serving_spec as sp
    from ..derive.quantity import Quantity

    gamma = _count(args.gamma, "--gamma")
    gmax = _count(args.gamma_max, "--gamma-max")
    if max(gamma, gmax) > GAMMA_LIMIT:
        raise SymgptError(f"--gamma and --gamma-max go up to {GAMMA_LIMIT} draft tokens")
    alpha = sp.acceptance(args.acceptance)
    if args.draft == "mtp":
        draft = sp.StepTimer(sp.mtp_model(m), module="mtp", **opts)
        what = (f"draft: {m.name}'s multi-token-prediction module (DeepSeek-V3 Sec. 2.2), reused for each token "
                "(its weights and its layer's cache are in the capacity above)")
    else:
        from ..model.model import load

        d = load(args.draft, **{k.name: v for k, v in m.bindings.items() if k.name in ("B", "T")})
        vocab = [mm.bindings.get(next((k for k in mm.bindings if k.name == "V"), None)) for mm in (m, d)]
        if None not in vocab and vocab[0] != vocab[1]:
            raise SymgptError(f"--draft {args.draft}: its vocabulary ({vocab[1]}) is not the target's ({vocab[0]}); "
                              "speculative decoding needs one tokenizer")
        draft = sp.StepTimer(d, **opts)
        what = f"draft: {d.name} on the same devices"
    spec = sp.Speculation(timer, draft, alpha)
    notes = (f"speculative decoding (Leviathan et al. 2023): gamma = {gamma}, acceptance {alpha}, batch {batch}, "
             f"a cache of T = {T}; {what}; step = gamma draft decode steps (caches T .. T + gamma - 1) + one target "
             "step of gamma + 1 tokens; rejected tokens' cache writes not priced",)

    def q(name, value, unit, extra=()):
        return Quantity(f"serving.speculative.{name}", (("total", sympy.Rational(value)),), {}, unit,
                        "leviathan-2023", notes + tuple(extra))

    best, best_v = spec.best_gamma(batch, T, gmax)
    cross = spec.crossover(gamma, T)
    out = [q("tokens_per_step", sp.tokens_per_step(alpha, gamma), "tokens",
             ("(1 - alpha^(gamma+1)) / (1 - alpha), Leviathan et al. 2023 eq. 1",)),
           q("step_time", spec.step_time(gamma, batch, T), "s"),
           q("speedup", spec.speedup(gamma, batch, T), "×",
             ("tokens per step × plain decode step / speculative step",)),
           q("best_gamma", best, "draft tokens", (f"the largest speed-up for gamma = 1..{gmax}: {float(best_v):.6g}× "
                                            f"(exactly {best_v})",))]
    if cross is None:
        out[2] = q("speedup", spec.speedup(gamma, batch, T), "×", (
            "tokens per step × plain decode step / speculative step", f"no crossover batch: speculation with gamma = "
            f"{gamma} pays at every batch up to {sp.BATCH_MAX}"))
    else:
        out.append(q("crossover_batch", cross, "sequences", (
            f"the smallest batch at which gamma = {gamma} no longer pays (speed-up <= 1), searched by doubling and "
            "bisection on the assumption that the speed-up falls with the batch",)))
    return out
