"""One inference step: the op graph evaluated at a query length against a key length.

A model's graph is declared at one sequence length T (its stacks' ``length``). Inference runs
it in two ways, both derived here from the same ops and their shape rules:

* **prefill**: B prompts of T tokens, nothing cached: every op as declared (query length T);
* **decode**: one new token per sequence (query length 1) whose keys and values join a cache
  that already holds T positions: the tensors the cache holds have T + 1 positions, so Q·Kᵀ is
  (1 × T+1) per head and A·V reads T + 1 values -- what a transformers ``DynamicCache`` does.
  Under a sliding window of W the cache keeps the last W - 1 positions, so a decode step reads
  Min(T + 1, W) of them (transformers' sliding-window cache layers; the prefill's eager
  attention still materialises its full T × T masked scores).

Which length grows is the stack length the output is laid out over (``generated``: a decoder's T,
an encoder--decoder's T_dec); a decode step runs only the ops that read the generated tokens.
Another stack's length (an encoder's T_enc) is read once per request: its stack runs in the
prefill only, and what a decode step reads of it (the cross-attention keys and values of the
encoder's output) is cached, over T_enc positions that do not grow. An op reading key positions
from the query ids alone (T5's relative position bias) sees, at a decode step, every cached key.

What the cache holds is found by role, never by path: an op declared ``cached=True`` (or False)
says so itself; otherwise the roles in ``roles.CACHED`` (the key and value heads, or an MLA
layer's latent and shared rotary key) are cached, after the per-token ops of
``roles.CACHE_AFTER`` that follow them (keys are cached normed and rotated). A family whose
cache holds something else (a cross-attention memory) declares it.

A recurrent layer (an op that sets ``recurrent_state``: a state-space scan, the gated delta rule,
their causal convolution) caches no positions: at a decode step it reads its one new token and the
fixed-size state it carries (``derive.recurrent``), and ``derive.inference`` prices that step by
the op's ``decode`` rule, constant in T.

Each :class:`OpStep` carries the shapes the op reads and writes at that step, and which of its
inputs come from the cache; ``derive.inference`` prices them (FLOPs, bytes, time).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy

from ..graph import roles
from ..graph.arch import Arch
from ..ops.base import Op, Shape, numel
from ..core.symbols import T, as_expr

#: the steps of inference
PHASES = ("prefill", "decode")

#: ops that move no data: a view of their input (a repeat of K/V heads is a broadcast)
VIEWS = ("slice", "split_heads", "merge_heads", "repeat_kv")


@dataclass(frozen=True)
class OpStep:
    node: str
    op: Op
    inputs: tuple[Shape, ...]       # as the op reads them (a cached K: all T + q positions)
    output: Shape                   # the op's output (a cached tensor: all T + q positions)
    written: Shape                  # what the op writes this step (a cached tensor: the q new ones)
    stored: tuple[sympy.Expr, ...]  # elements each input occupies in memory (a repeat is a view)
    from_cache: tuple[bool, ...]    # whether input i is read from the cache
    cached: bool                    # the output is held in the cache


@dataclass(frozen=True)
class Step:
    phase: str                      # "prefill" or "decode"
    query: sympy.Expr               # new tokens per sequence (T, or 1)
    past: sympy.Expr                # positions already cached (0, or T)
    ops: tuple[OpStep, ...]
    shapes: tuple = ()              # (node, shape) of every input and op node at this step


@lru_cache(maxsize=256)
def cache_points(arch: Arch) -> tuple[str, ...]:
    """The nodes whose outputs the cache holds, in forward order: of the roles the cache keeps,
    those a decode step reads. A recurrent layer's state is not among them (``derive.recurrent``:
    it is carried by the op, constant in T)."""
    g = arch.graph
    out = []
    for n, a in arch.ops():
        cached = a.get("cached")
        if cached is None:
            cached = a.get("role") in roles.CACHED
        if not cached:
            continue
        point = n
        while True:
            nxt = [s for s in g.successors(point) if g.nodes[s]["kind"] == "op"]
            if len(nxt) == 1 and g.nodes[nxt[0]].get("role") in roles.CACHE_AFTER and g.nodes[nxt[0]].get("cached") is not False:
                point = nxt[0]
            else:
                break
        if point not in out and _read_by_decode(arch, point):
            out.append(point)
    return tuple(out)


#: the attention matmuls a cached tensor feeds
_ATTENTION = ("attention_scores", "attention_values")


def attention_readers(arch: Arch, node: str) -> list:
    """(node, op) of the attention matmuls that read *node* (through views, norms, rotations,
    up-projections)."""
    g = arch.graph
    found, seen, frontier = [], {node}, [node]
    while frontier:
        n = frontier.pop()
        for v in g.successors(n):
            op = g.nodes[v].get("op")
            if op is None or v in seen:
                continue
            seen.add(v)
            if op.kind == "matmul" and op.tag in _ATTENTION:
                found.append((v, op))
            else:
                frontier.append(v)
    return found


def cache_window(readers):
    """The sliding window of the attention that reads a cached tensor (None: no window)."""
    return next((op.window for _, op in readers if op.window is not None), None)


def _read_by_decode(arch: Arch, node: str) -> bool:
    """Whether a decode step reads *node* (an encoder's own keys and values it never does; a
    cross-attention's keys and values it reads, through their repeat to the query heads too)."""
    once = once_per_request(arch)
    return (node not in once or any(s not in once for s in arch.graph.successors(node))
            or any(v not in once for v, _ in attention_readers(arch, node)))


@lru_cache(maxsize=256)
def inference_ops(arch: Arch) -> tuple[str, ...]:
    """The ops that produce the logits (the loss and anything after the output left out)."""
    needed = arch.graph.ancestors(arch.output) | {arch.output}
    return tuple(n for n, _ in arch.ops() if n in needed)


def _lengths(arch: Arch) -> set:
    out = {g.length for g in arch.stacks() if g.length is not None}
    return out or {T}


@lru_cache(maxsize=256)
def generated(arch: Arch) -> sympy.Expr:
    """The length that grows token by token: the stack length the output is laid out over (a
    decoder's T, an encoder--decoder's T_dec). Any other stack length (an encoder's T_enc) is
    read once per request: its stack runs in the prefill only, and what the decoder reads of it
    is cached (``roles.CACHED``: the cross-attention keys and values)."""
    lengths = _lengths(arch)
    shape = arch.graph.nodes[arch.output].get("shape", ())
    found = {s for s in lengths if any(as_expr(x).has(s) for x in shape)}
    if len(found) == 1:
        return found.pop()
    if len(lengths) == 1:
        return next(iter(lengths))
    from ..core.errors import SymgptError

    raise SymgptError(f"{arch.name}: cannot tell which sequence length grows in decoding")


@lru_cache(maxsize=256)
def once_per_request(arch: Arch) -> frozenset:
    """The ops a decode step does not run: those that read no input laid out over the generated
    length, only inputs over another one (an encoder and the cross-attention K/V over its output)."""
    g = arch.graph
    gen = generated(arch)
    grow, fixed = set(), set()
    # a vision--language model's images: its vision tower runs once, in the prefill (merged among the
    # tokens, or read by a cross-attention)
    images = any(a.get("role") in (roles.IMAGE_MERGE, roles.CROSS_SCORES) for _, a in g.nodes(data=True))
    for n, a in g.nodes(data=True):
        if a["kind"] != "input":
            continue
        has = [as_expr(x) for x in a["shape"]]
        if any(x.has(gen) for x in has):
            grow |= g.descendants(n) | {n}
        elif any(x.has(s) for x in has for s in _lengths(arch)) or (images and a.get("role") == roles.PIXELS):
            fixed |= g.descendants(n) | {n}
    return frozenset(n for n in fixed - grow if g.nodes[n]["kind"] == "op")


@lru_cache(maxsize=256)
def step(arch: Arch, phase: str) -> Step:
    """The ops of a prefill (``phase="prefill"``) or of one decode step (``"decode"``)."""
    if phase not in PHASES:
        from ..core.errors import SymgptError

        raise SymgptError(f"unknown phase {phase!r}; phases: {', '.join(PHASES)}")
    gen = generated(arch)
    query, past = (gen, sympy.Integer(0)) if phase == "prefill" else (sympy.Integer(1), gen)
    return _build(arch, phase, query, past)


@lru_cache(maxsize=256)
def extend_step(arch: Arch, query) -> Step:
    """A decode-like step of *query* new tokens per sequence against a cache that holds T
    positions (T + *query* keys; a sliding window's Min(T + query, W)): a speculative-decoding
    verification of query - 1 draft tokens, or a prefill chunk after T cached tokens. Its ops are
    a decode step's (what runs once per request is left out); ``query=1`` is the decode step."""
    return _build(arch, "decode", (sympy.Integer(query) if isinstance(query, int) else query), generated(arch))


@lru_cache(maxsize=256)
def module_step(arch: Arch, prefix: str, query=1) -> Step:
    """A decode-like step (as :func:`extend_step`) of the ops under ``prefix/`` alone, the loss
    left out: a module the logits do not need, such as DeepSeek-V3's multi-token-prediction
    module (``mtp``), run as a draft after the main model's step."""
    nodes = tuple(n for n, _ in arch.ops() if n.startswith(prefix + "/") and arch.role(n) != roles.LOSS)
    if not nodes:
        from ..core.errors import SymgptError

        raise SymgptError(f"{arch.name} has no module {prefix!r}")
    return _build(arch, "decode", (sympy.Integer(query) if isinstance(query, int) else query), generated(arch), nodes)


def _build(arch: Arch, phase: str, query, past, nodes=None) -> Step:
    q = sympy.Dummy("q", positive=True, integer=True)
    gen = generated(arch)
    points = set(cache_points(arch))
    lengths = {gen: q}
    # a decode step reads what the cache holds: under a sliding window of W the last W positions
    # (the new one with them), Min(T + 1, W) -- transformers' sliding-window cache layers keep W - 1
    held = {}
    if phase == "decode":
        for n in points:
            w = cache_window(attention_readers(arch, n))
            if w is not None:
                held[n] = sympy.Min(q + past, w)
    g = arch.graph
    shapes: dict[str, Shape] = {}
    computed: dict[str, Shape] = {}
    for n in arch.order:
        a = g.nodes[n]
        if a["kind"] == "input":
            shapes[n] = tuple(as_expr(s).xreplace(lengths) for s in a["shape"])
            continue
        ins = tuple(shapes[i] for i in a["inputs"])
        if getattr(a["op"], "key_positions", False) and len(ins) == 1:
            ins += (tuple(as_expr(s).xreplace({q: q + past}) for s in ins[0]),)  # keys: the cache too
        out = tuple(as_expr(s) for s in a["op"].shape(ins))
        computed[n] = out
        shapes[n] = tuple(s.xreplace({q: held.get(n, q + past)}) for s in out) if n in points else out
    fix = {q: query}

    def sub(shape):
        return tuple(sympy.expand(s.xreplace(fix)) for s in shape)

    def stored(i):
        while g.nodes[i]["kind"] == "op" and g.nodes[i]["op"].kind == "repeat_kv":
            i = g.nodes[i]["inputs"][0]
        return i

    skip = once_per_request(arch) if phase == "decode" else frozenset()
    ops = []
    for n in inference_ops(arch) if nodes is None else nodes:
        if n in skip:
            continue
        a = g.nodes[n]
        srcs = [stored(i) for i in a["inputs"]]
        ops.append(OpStep(n, a["op"], tuple(sub(shapes[i]) for i in a["inputs"]), sub(shapes[n]),
                          sub(computed[n]), tuple(sympy.expand(numel(sub(shapes[s]))) for s in srcs),
                          tuple(s in points for s in srcs), n in points))
    return Step(phase, query, past, tuple(ops), tuple((n, sub(shapes[n])) for n in arch.order))
