"""Times ``symgpt plan`` over a realistic space: GPT-3 175B on 1,024 devices, a global batch of
1,536 sequences, every (tp, pp, vp, dp, cp, micro-batch, recompute, ZeRO 0-3, SP) that divides it.

    python benchmarks/plan.py

Prints how many strategies were priced, how many fit in 80 GB, the best one, and the seconds
taken (derivation of the closed forms, then their vectorised evaluation). No test asserts a
timing.

Measured on the shared 2-core development machine (2026-11-30): 20,280 strategies priced over
144 structural choices (recompute × ZeRO 0-3 × SP × vp 1-3), 14,360 fit in 80 GB, 124 s. Nearly
all of it is deriving and compiling one closed form per structural choice (about 0.9 s each);
evaluating them over the strategies is a small part.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    import symgpt
    from symgpt.sweep.plan import plan

    m = symgpt.load("gpt3-175b", T=2048)
    t0 = time.perf_counter()
    r = plan(m, 1024, 1536, 80 * 10**9, 989 * 10**12, 450 * 10**9, 50 * 10**9, zero=(0, 1, 2, 3),
             vps=(1, 2, 3), microbatch_sizes=(1, 2, 4), top=3)
    t1 = time.perf_counter()
    best = r.rows[0] if r.rows else None
    print(f"strategies priced: {r.considered:,}; fit in 80 GB: {r.fitting:,}; seconds: {t1 - t0:.1f}")
    if best:
        print("best:", {k: (str(v) if not isinstance(v, (int, str, bool)) else v) for k, v in best.items()})


if __name__ == "__main__":
    main()
