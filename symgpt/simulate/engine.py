"""A discrete-event simulation of a vLLM-like continuous-batching scheduler, on SimPy.

The scheduler is one SimPy process on the environment's clock; each iteration plans one step
(a batch), asks ``step_time`` for its seconds and advances the clock by them (``timeout``);
when nothing can run it waits for the next arrival. Times are floats, in seconds. A request
arriving at or before a step's start is eligible for that step. Requests are served first come,
first served; the head of the queue that does not fit blocks those behind it.

* ``prefill-first`` (vLLM v0's default): a step prefills the whole prompts of waiting requests
  (as many as the free sequence slots, KV blocks and token budget allow) and decodes nothing;
  when none is admitted, every running sequence decodes one token.
* ``chunked`` (Sarathi-Serve, Agrawal et al. 2024): every step decodes one token of each running
  sequence and fills the rest of the token budget with prompt chunks, of partly prefilled
  requests first, then of newly admitted ones.

A prompt's prefill yields the first output token (at the end of the step that completes it);
each later token takes one decode step, whose sequence's cache holds the prompt and the tokens
generated so far but the newest. KV blocks: a request reserves ceil((prompt + output - 1) /
block_size) blocks when admitted and frees them when done (vLLM allocates as a sequence grows and
preempts by recomputation when blocks run out; neither is modelled: no request is preempted).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import SymgptError

SCHEDULERS = ("prefill-first", "chunked")
MAX_BATCH = 256        # vLLM's max_num_seqs default
CHUNK_BUDGET = 2048    # tokens per step with chunked prefill (vLLM's max_num_batched_tokens default then)
BLOCK_SIZE = 16        # vLLM's default block size


@dataclass(frozen=True)
class Config:
    scheduler: str = "prefill-first"
    max_batch: int = MAX_BATCH
    token_budget: int | None = None        # tokens per step (None: no limit for prefill-first)
    capacity_blocks: int | None = None     # KV blocks (None: unlimited)
    block_size: int = BLOCK_SIZE

    def budget(self) -> int | None:
        return self.token_budget if self.token_budget is not None or self.scheduler != "chunked" else CHUNK_BUDGET


@dataclass
class Outcome:
    arrival: list
    first_token: list      # seconds at which each request's first output token came out
    finish: list           # seconds at which its last came out
    prompt: list
    output: list
    steps: int             # scheduler steps
    busy: float            # seconds spent in steps
    peak_batch: int        # the most sequences admitted at once
    config: Config


def blocks(prompt: int, output: int, block_size: int) -> int:
    """KV blocks a request holds at its longest: its cache's prompt + output - 1 tokens."""
    return -(-(prompt + output - 1) // block_size)


def check(trace, config: Config) -> None:
    if config.scheduler not in SCHEDULERS:
        raise SymgptError(f"unknown scheduler {config.scheduler!r}; schedulers: {', '.join(SCHEDULERS)}")
    for name, v in (("--max-batch", config.max_batch), ("--token-budget", config.token_budget),
                    ("the KV capacity in blocks", config.capacity_blocks), ("--block-size", config.block_size)):
        if v is not None and v < 1:
            raise SymgptError(f"{name} must be at least 1, got {v}")
    budget = config.budget()
    if config.scheduler == "chunked" and budget < config.max_batch:
        raise SymgptError(f"with chunked prefill the token budget ({budget}) must be at least --max-batch "
                          f"({config.max_batch}): each running sequence's decode takes a token of it")
    for i in range(len(trace)):
        p, g = trace.prompt[i], trace.output[i]
        if config.capacity_blocks is not None and blocks(p, g, config.block_size) > config.capacity_blocks:
            raise SymgptError(f"request {i + 1} ({p} + {g} tokens) needs {blocks(p, g, config.block_size)} KV "
                              f"blocks, more than the capacity of {config.capacity_blocks}")
        if config.scheduler == "prefill-first" and budget is not None and p > budget:
            raise SymgptError(f"request {i + 1}'s prompt of {p} tokens exceeds the token budget of {budget} "
                              "(prefill-first prefills whole prompts; use --scheduler chunked)")


def simulate(trace, step_time, config: Config = Config(), progress=None) -> Outcome:
    """Replay *trace* (``trace.Trace``) through the scheduler of *config*; *step_time* is
    ``step_time(prefill_chunks, decode_contexts) -> seconds`` (a ``StepCost``'s ``fast`` is used
    when it has one). *progress*: an object with ``update(done)`` and ``close()``, or None."""
    import heapq
    from collections import deque

    import simpy

    check(trace, config)
    arr, P, G = trace.arrival, trace.prompt, trace.output
    n, bs, cap = len(arr), config.block_size, config.capacity_blocks
    budget, max_batch, chunked = config.budget(), config.max_batch, config.scheduler == "chunked"
    fast = getattr(step_time, "fast", None)
    first, finish, joined = [0.0] * n, [0.0] * n, [0] * n
    env = simpy.Environment()
    st = dict(steps=0, busy=0.0, peak=0)

    def run():
        nxt, done, free, counter, ctx_sum = 0, 0, cap, 0, 0
        waiting, prefilling, running = deque(), [], set()     # prefilling: [id, tokens done]
        ends = []                                              # (decode count at its end, id)
        while done < n:
            now = env.now
            while nxt < n and arr[nxt] <= now:
                waiting.append(nxt)
                nxt += 1
            chunks, left = [], (budget - (len(running) if chunked else 0)) if budget is not None else None
            if chunked:
                for entry in prefilling:
                    if left <= 0:
                        break
                    k = min(P[entry[0]] - entry[1], left)
                    chunks.append((entry, k))
                    left -= k
            if chunked or not chunks:
                slots = max_batch - len(running) - len(prefilling)
                while waiting and slots > 0 and (left is None or left > 0):
                    i = waiting[0]
                    need = blocks(P[i], G[i], bs)
                    if (cap is not None and need > free) or (not chunked and left is not None and P[i] > left):
                        break
                    waiting.popleft()
                    if cap is not None:
                        free -= need
                    entry = [i, 0]
                    prefilling.append(entry)
                    k = P[i] if left is None else min(P[i], left)
                    chunks.append((entry, k))
                    slots -= 1
                    if left is not None:
                        left -= k
            decoding = chunked or not chunks
            nd = len(running) if decoding else 0
            if not chunks and not nd:
                yield env.timeout(arr[nxt] - now)
                continue
            st["peak"] = max(st["peak"], len(running) + len(prefilling))
            tokens = sum(k for _, k in chunks)
            if fast is not None:
                pairs = sum(k * (e[1] + k) for e, k in chunks)
                causal = sum((e[1] + k) ** 2 - e[1] ** 2 for e, k in chunks)
                longest = max((e[1] + k for e, k in chunks), default=0)
                dt = fast(nd, ctx_sum if nd else 0, tokens, pairs, causal, longest)
            else:
                ctx = [P[i] + counter - joined[i] for i in running] if nd else []
                dt = step_time([(e[1], k) for e, k in chunks], sorted(ctx))
            yield env.timeout(dt)
            now = env.now
            st["steps"] += 1
            st["busy"] += dt
            if nd:
                counter += 1
                ctx_sum += nd
                while ends and ends[0][0] == counter:
                    i = heapq.heappop(ends)[1]
                    running.discard(i)
                    finish[i] = now
                    ctx_sum -= P[i] + G[i] - 1
                    free = free + blocks(P[i], G[i], bs) if cap is not None else None
                    done += 1
            for entry, k in chunks:
                entry[1] += k
                i = entry[0]
                if entry[1] < P[i]:
                    continue
                prefilling.remove(entry)
                first[i] = now
                if G[i] == 1:
                    finish[i] = now
                    free = free + blocks(P[i], G[i], bs) if cap is not None else None
                    done += 1
                else:
                    running.add(i)
                    joined[i] = counter
                    ctx_sum += P[i]
                    heapq.heappush(ends, (counter + G[i] - 1, i))
            if progress is not None and st["steps"] % 512 == 0:
                progress.update(done)

    env.process(run())
    env.run()
    if progress is not None:
        progress.update(n)
        progress.close()
    return Outcome(list(arr), first, finish, list(P), list(G), st["steps"], st["busy"], st["peak"], config)
