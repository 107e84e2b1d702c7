"""The command-line edge of the simulation: the options a command adds (``add_arguments``), and
``run``, which answers a JSON-ready dict (exact closed forms as text), printed by ``render``."""

from __future__ import annotations

import sys

from ..core.errors import SymgptError
from .engine import BLOCK_SIZE, CHUNK_BUDGET, MAX_BATCH, SCHEDULERS
from .trace import DIST_HELP

SIM_HELP = (f"Simulating a request mix: --trace FILE.csv (header arrival_time_s,prompt_tokens,output_tokens) or "
            f"--requests N --rate R --prompt-dist D --output-dist D, where D is {DIST_HELP}; arrivals are Poisson at R "
            "requests/s (inf: all at 0 s). Times are simulated as float seconds.")


def add_arguments(p) -> None:
    """Add the simulation's options to an argparse parser (or argument group)."""
    import argparse

    g = p.add_argument_group("request-mix simulation", SIM_HELP) if isinstance(p, argparse.ArgumentParser) else p
    g.add_argument("--trace", metavar="FILE.csv", help="replay a request trace (CSV with the header "
                   "arrival_time_s,prompt_tokens,output_tokens; arrival times not decreasing)")
    g.add_argument("--requests", metavar="N", help="simulate N requests drawn from --prompt-dist and --output-dist")
    g.add_argument("--rate", metavar="R", help="arrivals per second of a Poisson process (inf: all at time 0)")
    g.add_argument("--prompt-dist", metavar="DIST", help=f"prompt lengths: {DIST_HELP}")
    g.add_argument("--output-dist", metavar="DIST", help=f"output lengths: {DIST_HELP}")
    g.add_argument("--stream", metavar="N", default="0", help="the random generator's start (PCG64; default 0): "
                   "the same number, the same requests")
    g.add_argument("--scheduler", default="prefill-first", choices=SCHEDULERS,
                   help="prefill-first: whole prompts in steps of their own, decodes paused (vLLM v0); chunked: "
                        "decodes and prompt chunks share each step's token budget (Sarathi-Serve)")
    g.add_argument("--token-budget", metavar="N", help="tokens per step (default: none for prefill-first, "
                   f"{CHUNK_BUDGET} for chunked)")
    g.add_argument("--max-batch", metavar="N", default=str(MAX_BATCH),
                   help=f"the most sequences running at once (default {MAX_BATCH}, vLLM's max_num_seqs)")
    # preemption by recomputation when KV blocks run out
    g.add_argument("--preempt", action="store_true",
                   help="allocate KV blocks as sequences grow and, when none is free, preempt the most recently "
                        "admitted sequence and recompute it later (vLLM; prefill-first only); default: a request "
                        "reserves its longest cache when admitted")


def wants_simulation(args) -> bool:
    return getattr(args, "trace", None) is not None or getattr(args, "requests", None) is not None


def _count(text, what, zero=False) -> int:
    t = str(text).strip()
    if not t.isdigit() or (int(t) < 1 and not zero):
        raise SymgptError(f"{what} must be a {'whole number' if zero else 'positive integer'}, got {t[:40]!r}")
    return int(t)


def trace_of(args):
    from .trace import draw_trace, read_trace

    if args.trace is not None and args.requests is not None:
        raise SymgptError("give --trace or --requests, not both")
    if args.trace is not None:
        extra = [f for f in ("rate", "prompt_dist", "output_dist") if getattr(args, f) is not None]
        if extra:
            raise SymgptError(f"--{extra[0].replace('_', '-')} draws requests; a --trace gives them")
        return read_trace(args.trace)
    if args.requests is None:
        raise SymgptError("a simulation needs --trace FILE.csv or --requests N")
    missing = [f for f in ("rate", "prompt_dist", "output_dist") if getattr(args, f) is None]
    if missing:
        raise SymgptError(f"--requests needs --{missing[0].replace('_', '-')}")
    return draw_trace(_count(args.requests, "--requests"), args.rate, args.prompt_dist, args.output_dist,
                      _count(args.stream, "--stream", zero=True))


def config_of(args, capacity_blocks=None):
    from .engine import Config

    budget = None if args.token_budget is None else _count(args.token_budget, "--token-budget")
    block = getattr(args, "block_size", None)
    block = BLOCK_SIZE if block is None else _count(block, "--block-size")
    cap = None if capacity_blocks is None else int(capacity_blocks)
    return Config(args.scheduler, _count(args.max_batch, "--max-batch"), budget, cap, block)


def _options(hardware) -> dict:
    if isinstance(hardware, str):
        return {"hardware": hardware}
    if isinstance(hardware, dict):
        return dict(hardware)
    raise SymgptError("the simulation needs a device: --hardware NAME, or --peak and --bandwidth")


def run(model, args, hardware, capacity_blocks=None, progress=None) -> dict:
    """Simulate the request mix of *args* (see ``add_arguments``) on *model*; *hardware*: a
    profile name or a dict of ``symgpt infer``'s options (``hardware``, ``peak``, ``bandwidth``,
    ``chips``, ``weight_bits``, ...); *capacity_blocks*: the KV blocks that fit (None: only
    --max-batch limits). A progress bar goes to stderr when it is a terminal (or *progress*)."""
    from ..sweep.run import Progress
    from .engine import check, simulate
    from .results import summary
    from .steady import steady
    from .stepcost import step_cost

    options = _options(hardware)
    trace = trace_of(args)
    config = config_of(args, capacity_blocks)
    check(trace, config)
    limit = model.sizes.get("T_max")
    if limit is not None:
        for i, (p, g) in enumerate(zip(trace.prompt, trace.output)):
            if p + g - 1 > limit:
                raise SymgptError(f"request {i + 1} reaches {p + g - 1} tokens ({p} + {g} - 1), more than "
                                  f"{model.name}'s context of T_max = {limit}")
    cost = step_cost(model, **options)
    if progress is None and sys.stderr.isatty():
        progress = Progress(len(trace), sys.stderr, label="simulation", unit="requests")
    preempting = getattr(args, "preempt", False)
    if preempting:
        from .preempt import simulate as simulate_preempting

        outcome = simulate_preempting(trace, cost, config)
    else:
        outcome = simulate(trace, cost, config, progress)
    prompt = max(1, round(sum(trace.prompt) / len(trace)))
    output = max(1, round(sum(trace.output) / len(trace)))
    blocks_note = ("KV blocks: a request reserves ceil((prompt + output - 1) / block size) blocks at admission and "
                   "frees them when done (no preemption)")
    if preempting:
        blocks_note = ("KV blocks: allocated as a sequence's cache grows; when none is free the most recently admitted "
                       "sequence is preempted and recomputed (its prompt and generated tokens prefilled again) when "
                       "admitted again, as vLLM's scheduler does (_schedule_running, _preempt_by_recompute); the "
                       "steady state below still reserves the longest cache")
    notes = list(cost.notes) + [
        blocks_note,
        "TPOT: (last token - first token) / (output - 1), requests with two output tokens or more; throughput "
        "over the makespan, from the first arrival to the last token"]
    if len(set(trace.prompt)) > 1 or len(set(trace.output)) > 1:
        notes.append(f"steady state at the mix's mean lengths, rounded: P = {prompt}, G = {output}")
    st = steady(model, prompt, output, config.max_batch, config.capacity_blocks, config.block_size, **options)
    notes += st.pop("notes")
    return {"model": model.name,
            "device": {k: (v if isinstance(v, (int, bool, str)) else str(v)) for k, v in options.items()},
            "trace": trace.source,
            "config": {"scheduler": config.scheduler, "max_batch": config.max_batch,
                       "token_budget": config.budget(), "capacity_blocks": config.capacity_blocks,
                       "block_size": config.block_size},
            "simulation": {**summary(outcome), **({"preemptions": outcome.preemptions} if preempting else {})},
            "steady": st, "notes": notes}


def render(result: dict) -> str:
    """*result* of ``run`` as text."""
    from .results import render as text

    return text(result)


__all__ = ["add_arguments", "run", "render", "wants_simulation"]
