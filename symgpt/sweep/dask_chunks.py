"""Sweeps on Dask: local worker processes (``distributed.LocalCluster``), or the cluster of a
named scheduler (``tcp://host:8786``), so a design-space search can outgrow one machine.

Each task evaluates a range of chunks of one flag setting from two indices (``Kernel.part``);
the kernels (compiled closed forms: integer terms and small exact tables) are scattered to
every worker once, and no task ships an array. ``--top`` reduces on the cluster as a tree
(``kernel.merge``: the exact top K of the parts, ties in grid order, so any grouping gives the
same rows); rows and CSV text come back in grid order through a window of a few tasks, so the
driver holds a bounded amount whatever the grid. Every worker needs symgpt (the same version)
importable.
"""

from __future__ import annotations

import re
from collections import deque
from itertools import islice
from typing import Callable, Iterator

from ..core.errors import SymgptError
from .kernel import Kernel, Part, merge

CONNECT_TIMEOUT = 10        # seconds to reach a named scheduler and see a worker
TASK_POINTS = 1 << 22       # points one --top task evaluates at most (then its top K goes up)
FAN = 8                     # parts merged by one reduction task
#: a scheduler's address: an optional protocol, a host (a name, an IPv4 or a bracketed IPv6
#: address) and a port -- without the port Dask would try for the whole timeout and fail unclearly
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:[A-Za-z0-9][A-Za-z0-9.\-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])"
                      r":[0-9]{1,5}")


def _evaluate(kernel: Kernel, first: int, last: int, mode: str) -> Part:
    return kernel.part(first, last, mode)


def _merge(k, by, smallest, *parts: Part) -> Part:
    return merge(parts, k, by, smallest)


class DaskSession:
    """A Dask client for one sweep: *workers* local processes (one thread each), or the
    cluster whose scheduler is *scheduler* (an address, or a ``distributed.Client`` to use)."""

    def __init__(self, workers: int, scheduler=None):
        self.workers, self.scheduler = workers, scheduler
        self.client = self.cluster = None
        self.own = True

    def __enter__(self) -> "DaskSession":
        import logging

        from distributed import Client, LocalCluster

        if self.workers > 0:
            try:
                self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address=None,
                                            worker_dashboard_address=None, silence_logs=logging.ERROR)
                self.client = Client(self.cluster, set_as_default=False)
            except Exception as e:  # no process may be started here, no port bound: one line
                self.__exit__(None, None, None)
                why = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise SymgptError(f"cannot start {self.workers} local Dask worker processes: {why} "
                                  "(--workers 0 runs in this process)") from None
        elif isinstance(self.scheduler, Client):
            self.client, self.own = self.scheduler, False
        else:
            address = self.scheduler
            if not isinstance(address, str) or not _ADDRESS.fullmatch(address):
                raise SymgptError(f"--scheduler expects a Dask scheduler address with its port, such as "
                                  f"tcp://host:8786, got {address!r}")
            try:
                self.client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
                self.client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
            except Exception as e:  # refused, unknown host, timed out, no worker: one line
                self.__exit__(None, None, None)
                why = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise SymgptError(f"cannot use the Dask scheduler at {address}: {why}") from None
        self.threads = max(1, sum(self.client.nthreads().values()))
        return self

    def __exit__(self, *exc) -> None:
        if self.client is not None and self.own:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def _kernels(self, kernels: list[Kernel]):
        return self.client.scatter(kernels, broadcast=True, hash=False)

    def ordered(self, kernels: list[Kernel], mode: str) -> Iterator[Part]:
        """Each chunk's part (``"rows"`` or ``"csv"``), in grid order; a few in flight."""
        remote = self._kernels(kernels)
        tasks = ((i, k) for i, kernel in enumerate(kernels) for k in range(kernel.chunk_count()))
        window = 2 * self.threads + 1
        pending = deque(self._submit(remote, i, k, k + 1, mode) for i, k in islice(tasks, window))
        while pending:
            part = _result(pending.popleft())
            for i, k in islice(tasks, 1):
                pending.append(self._submit(remote, i, k, k + 1, mode))
            yield part

    def top(self, kernels: list[Kernel], progress: Callable[[int], None]) -> Part:
        """The top K of every kernel's rows and the counts, reduced on the cluster as a tree
        (*FAN* parts per merge); *progress* gets the points evaluated so far."""
        from distributed import as_completed

        k = kernels[0]
        remote = self._kernels(kernels)
        chunks = sum(kernel.chunk_count() for kernel in kernels)
        per = max(1, min(TASK_POINTS // k.chunk, -(-chunks // (4 * self.threads))))
        tasks = ((i, a, a + per) for i, kernel in enumerate(kernels)
                 for a in range(0, kernel.chunk_count(), per))
        window = 4 * self.threads
        leaves: dict = {}        # key -> points, of the leaves in flight
        ready, done, busy = [], 0, 0
        done_submitting = False
        ac = as_completed(loop=self.client.loop)

        def more() -> None:
            nonlocal done_submitting, busy
            while len(leaves) < window and not done_submitting:
                task = next(tasks, None)
                if task is None:
                    done_submitting = True
                    return
                i, a, b = task
                f = self._submit(remote, i, a, b, "top")
                leaves[f.key] = kernels[i].grid.chunk_points(k.chunk, a, b)
                ac.add(f)
                busy += 1

        more()
        for f in ac:
            busy -= 1
            if f.key in leaves:
                done += leaves.pop(f.key)
                progress(done)
                more()
            ready.append(f)
            if len(ready) >= FAN or (done_submitting and busy == 0 and len(ready) > 1):
                ac.add(self.client.submit(_merge, k.top, k.by, k.smallest, *ready, pure=False))
                busy += 1
                ready = []
        return _result(ready[0])

    def _submit(self, remote, i: int, first: int, last: int, mode: str):
        return self.client.submit(_evaluate, remote[i], first, last, mode, pure=False)


def _result(future) -> Part:
    try:
        return future.result()
    except SymgptError:
        raise
    except Exception as e:  # a worker died, lost its data, ran out of memory: one line
        why = str(e).splitlines()[0] if str(e) else ""
        raise SymgptError(f"the Dask computation failed: {type(e).__name__}" + (f": {why}" if why else "")) from None
