"""The prefill-first scheduler of ``engine`` with KV blocks allocated as sequences grow, and
preemption by recomputation when they run out (vLLM's scheduler: ``_schedule_running`` appends a
slot to each running sequence in first-come order and, when no block is free, preempts the
lowest-priority sequence -- the most recently admitted -- frees its blocks and puts it back at
the head of the waiting queue; ``_preempt_by_recompute`` drops its cache, so when it is admitted
again it prefills its prompt and every token generated so far).

A request's prefill of n tokens (its prompt, or its prompt and its g generated tokens after a
preemption) holds ceil(n / block size) blocks and yields its next output token; a decode step
writes one token more into the cache of each running sequence, which takes a new block when the
cache crosses a block boundary. Admission is first come, first served, as in ``engine``; a
request is admitted when its prefill's blocks are free. Times are floats in seconds, one step
after another on a plain clock (no other process runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import SymgptError
from .engine import Config, Outcome, check


@dataclass
class Preempted(Outcome):
    preemptions: int = 0   # times a running sequence was preempted


def _blocks(tokens: int, size: int) -> int:
    return -(-tokens // size)


def simulate(trace, step_time, config: Config = Config()) -> Preempted:
    """Replay *trace* through prefill-first scheduling with growing allocation and preemption by
    recomputation; *step_time* as ``engine.simulate`` takes it."""
    from collections import deque

    if config.scheduler != "prefill-first":
        raise SymgptError("preemption is simulated with the prefill-first scheduler only")
    if config.capacity_blocks is None:
        raise SymgptError("preemption needs the KV capacity in blocks (the device's memory)")
    check(trace, config)
    arr, P, G = trace.arrival, trace.prompt, trace.output
    n, bs, budget = len(arr), config.block_size, config.budget()
    first, finish = [0.0] * n, [0.0] * n
    gen, cached, held = [0] * n, [0] * n, [0] * n
    free, now, nxt, done, steps, busy, peak, preemptions = config.capacity_blocks, 0.0, 0, 0, 0, 0.0, 0, 0
    waiting, running = deque(), []          # running: in admission order (the last is preempted first)
    fast = getattr(step_time, "fast", None)
    while done < n:
        while nxt < n and arr[nxt] <= now:
            waiting.append(nxt)
            nxt += 1
        chunks, left = [], budget
        while waiting and len(running) + len(chunks) < config.max_batch:
            i = waiting[0]
            k = P[i] + gen[i]                # a preempted request recomputes what it generated
            if _blocks(k, bs) > free or (left is not None and k > left):
                break
            waiting.popleft()
            free -= _blocks(k, bs)
            held[i] = _blocks(k, bs)
            chunks.append((i, k))
            if left is not None:
                left -= k
        decoding = []
        if not chunks:
            queue = list(running)
            while queue:
                i = queue.pop(0)
                while _blocks(cached[i] + 1, bs) > held[i] and free == 0:
                    victim = running.pop()    # the most recently admitted
                    free += held[victim]
                    held[victim], cached[victim] = 0, 0
                    waiting.appendleft(victim)
                    preemptions += 1
                    if victim == i:
                        break
                    if victim in queue:
                        queue.remove(victim)
                    else:
                        decoding.remove(victim)
                if i not in running:
                    continue
                if _blocks(cached[i] + 1, bs) > held[i]:
                    free -= 1
                    held[i] += 1
                decoding.append(i)
        if not chunks and not decoding:
            if nxt >= n:
                raise SymgptError("the simulation cannot proceed: no request fits the KV capacity")
            now = max(now, arr[nxt])
            continue
        peak = max(peak, len(running) + len(chunks))
        ctx = sorted(cached[i] for i in decoding)
        if fast is not None:
            tokens = sum(k for _, k in chunks)
            squares = sum(k * k for _, k in chunks)
            dt = fast(len(ctx), sum(ctx), tokens, squares, squares, max((k for _, k in chunks), default=0))
        else:
            dt = step_time([(0, k) for _, k in chunks], ctx)
        now += dt
        steps += 1
        busy += dt
        for i in decoding:
            cached[i] += 1
        for i, k in chunks:
            cached[i] = k
            running.append(i)
        for i in decoding + [i for i, _ in chunks]:
            gen[i] += 1
            if gen[i] == 1:
                first[i] = now
            if gen[i] == G[i]:
                finish[i] = now
                running.remove(i)
                free += held[i]
                held[i] = 0
                done += 1
    return Preempted(list(arr), first, finish, list(P), list(G), steps, busy, peak, config, preemptions)
