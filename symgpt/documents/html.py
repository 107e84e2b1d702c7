"""The interactive page of a model: what it shows, derived here; printed by ``symgpt.render.html``.

The page evaluates closed forms in the browser, so it needs them over *every* size: the model
is taken with all its sizes free (``Model.free``) and each quantity derived once, symbolically.
Its inputs start at the model's values (B = 8 and T = T_max unless set, as in the report).

Options that change the closed form are handled two ways, both exact:

* ``precision``, ``optimizer`` and ``zero`` take a few values: the page holds the closed form of
  each memory quantity for every combination of the options that quantity reads (``READS``),
  deduplicated, and picks one as they change;
* ``dp`` and ``tp`` are any positive integers: they enter the derivation as symbols (a
  ``symgpt.derive.layout`` degree may be a symbol), so each combination is derived once. Every
  memory breakdown entry must come out as ``c₀ + c₁/tp + c₂/dp + c₃/(tp·dp)`` (a parameter or a
  saved tensor is held whole or split tp ways, and dp ways under ZeRO); anything else (a Min, a
  power of tp) is an error, never a silently wrong page, and each quantity is checked against
  its derivation at tp = 3, dp = 5.

Inference on a hardware profile (``hardware``, a choice among ``symgpt.core.hardware``'s profiles):
the prefill and decode step times are derived once with the device's peak ``F_peak`` and memory
bandwidth ``BW_mem`` left symbolic (sums of max(FLOPs / F_peak, bytes / BW_mem)); the page holds
each profile's two numbers, as ``symgpt.derive.inference_setup.setup`` binds them (16-bit weights
and activations), and binds them when a profile is chosen. Decode tokens/s is B over the decode
step time.

Serving (``symgpt.derive.serving``, as ``symgpt serve`` prices it: flash attention, 16-bit): the KV
budget, the bytes one sequence of T tokens holds and the sequences that fit, with the block size
``block`` (an input, vLLM's 16 by default) and the device's memory ``M_dev`` (bound with the
profile) symbolic: the engine's ``Paged`` blocks with the block size a symbol.

``memory.total`` is weights + gradients + optimizer + activations, as ``symgpt.derive.memory``
defines it; each assembled total is checked against the derived one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

import sympy

from ..derive.shortcuts import expanded
from ..core.errors import SymgptError
from ..core.io import write_atomic
from ..core.symbols import BW_mem, CANONICAL, F_peak, HARDWARE_SYMBOLS, MEANING, B, as_expr

#: the report file this part writes
FILE = "html/index.html"
#: a report runs this part in a forked process, while the other parts are written
PARALLEL = True

TP = sympy.Symbol("tp", integer=True, positive=True)
DP = sympy.Symbol("dp", integer=True, positive=True)

FLOPS = ("flops.forward", "flops.backward", "flops.train")
#: memory quantities and the discrete options each reads (dp and tp are symbols in all of them)
READS = {"memory.weights": ("precision", "zero"), "memory.gradients": ("precision", "zero"),
         "memory.optimizer": ("precision", "optimizer", "zero"), "memory.activations": ("precision",),
         "memory.kv_cache": ("precision",)}
TOTAL = "memory.total"
TOTAL_READS = ("precision", "optimizer", "zero")
#: inference quantities shown, derived with F_peak and BW_mem symbolic (see the module docstring)
INFERENCE = ("inference.prefill.time", "inference.decode.time", "inference.kv_cache")
TOKENS_PER_S = "inference.decode.tokens_per_s"
DEFAULT_HARDWARE = "h100-sxm"
#: serving (paged KV cache, ``symgpt.derive.serving``): the block size and the device's memory are
#: symbols the page binds (the block input; the profile's memory), as flash attention serves
SERVING = ("serving.kv_budget", "serving.kv_per_sequence", "serving.max_sequences")
BLOCK_SIZE = sympy.Symbol("block", integer=True, positive=True)
DEVICE_MEMORY = sympy.Symbol("M_dev", positive=True)


@dataclass
class Exprs:
    """The page's expressions, each stored once; quantities refer to them by index."""

    items: list = field(default_factory=list)
    index: dict = field(default_factory=dict)
    variants: dict = field(default_factory=dict)  # breakdown -> its variant (see _variant)

    def add(self, e) -> int:
        e = as_expr(e)
        if e not in self.index:
            self.index[e] = len(self.items)
            self.items.append(e)
        return self.index[e]


@dataclass
class Page:
    """Everything the printer lays out: plain data, expressions by index into ``exprs``."""

    model: object              # the model as loaded (name, family, flags, notes)
    free: object               # the same model with every size free (its arch is drawn)
    exprs: Exprs
    symbols: list              # [{name, value, meaning}]
    options: list              # [{name, values, default, help}]
    quantities: list           # [{name, unit, title, reads, variants, pick}]
    ops: list                  # [{path, label, kind, describe, inputs, output, repeat}]
    constraints: list          # [{kind, expr, message}]
    plots: dict
    convention: object         # the counting convention (symgpt.core.conventions.Convention)
    notes: list
    svg: str                   # the compute graph (Graphviz SVG, sizes symbolic)
    hardware: dict | None = None  # {profile: {"title", "values": {F_peak, BW_mem}}}; None: no inference
    serving: dict | None = None   # {"block": default block size, "utilization", "workspace_tokens"}; None: none


def option_values():
    from ..derive.memory import OPTIMIZERS, PRECISIONS

    # a recipe with a low-precision GEMM format (scales per started tile: ceiling) is not offered on the page
    plain = tuple(n for n, p in PRECISIONS.items() if not p.gemm_input)
    return {"precision": plain, "optimizer": tuple(OPTIMIZERS), "zero": (0, 1, 2, 3)}


def page(model, **_report_options) -> Page:
    """The page of *model* (a loaded ``Model``), every closed form derived once. (Options a
    report passes to every part, such as ``pdf``, do not concern the page.)"""
    from ..core.conventions import CONVENTIONS
    from .diagrams import diagram
    from .workload import report_model

    model = report_model(model)
    free = model.free(*model.sizes)
    exprs = Exprs()
    conv = CONVENTIONS["default"]
    defaults = {"precision": conv.precision, "optimizer": "adamw", "zero": 0}
    values = option_values()

    quantities = [_fixed(exprs, free.params, "params", "parameters")]
    if sympy.expand(free.quantity("params.active").expr - free.params.expr) != 0:
        quantities.append(_fixed(exprs, free.quantity("params.active"), "params.active",
                                 "parameters that run per token"))
    for name in FLOPS:
        quantities.append(_fixed(exprs, free.quantity(name), name, "FLOPs"))
    memory = {name: _memory(exprs, free, name, reads, values) for name, reads in READS.items()}
    memory[TOTAL] = _total(exprs, free, memory, values)
    quantities += [memory[n] for n in ("memory.weights", "memory.gradients", "memory.optimizer",
                                        "memory.activations", TOTAL, "memory.kv_cache")]

    hardware = _inference(exprs, free, quantities)
    serving = _serving(exprs, free, quantities, hardware)
    ops, plots = _ops(free.arch, exprs), _plots(free, exprs)
    symbols = _symbols(model, exprs)
    options = [{"name": n, "values": [str(v) for v in values[n]], "default": str(defaults[n])}
               for n in ("precision", "optimizer", "zero")]
    options += [{"name": "dp", "values": None, "default": "1"}, {"name": "tp", "values": None, "default": "1"}]
    if hardware is not None:
        options.append({"name": "hardware", "values": list(hardware), "default": DEFAULT_HARDWARE})
    waived = model.preset.waive if model.preset else ()  # as Model checks them (a preset's own caveat)
    constraints = [{"kind": c.kind, "expr": exprs.add(c.expr), "message": c.message}
                   for c in free.arch.constraints if c.id is None or c.id not in waived]
    if "h" in {s["name"] for s in symbols}:
        constraints.append({"kind": "integer", "expr": exprs.add(CANONICAL["h"] / TP),
                            "message": "tp must divide the number of heads h (each rank holds whole heads)"})
    for sym, what in (("h_ssm", "Mamba-2 heads"), ("G_ssm", "Mamba-2 groups")):
        if sym in {s["name"] for s in symbols} and _sharded(free, 2) != 1 and sym in CANONICAL:
            constraints.append({"kind": "integer", "expr": exprs.add(CANONICAL[sym] / TP),
                                "message": f"tp must divide the {what} {sym} (Megatron-LM's MambaMixer: each rank "
                                           "holds whole heads and groups)"})
    if _sharded(free, 2) == 1:
        from ..derive.tensor_parallel_ssm import tp_refusal

        constraints.append({"kind": "le", "expr": exprs.add(TP - 1), "message": tp_refusal(free, 2)})
    return Page(model=model, free=free, exprs=exprs, symbols=symbols, options=options,
                quantities=quantities, ops=ops, constraints=constraints, plots=plots, convention=conv,
                notes=list(model.notes), svg=diagram(free, color_by="none").svg(), hardware=hardware,
                serving=serving)


# --- quantities --------------------------------------------------------------------------------
def _variant(exprs: Exprs, breakdown) -> dict:
    """The parts and the expanded total of *breakdown*, by index (a breakdown equal to one seen
    before -- the same trees -- has the same indices: assembled once)."""
    key = tuple(breakdown)
    if key not in exprs.variants:
        parts = [(p, exprs.add(e)) for p, e in breakdown]
        exprs.variants[key] = (exprs.add(expanded(sympy.Add(*[e for _, e in breakdown]))), parts)
    total, parts = exprs.variants[key]
    return {"total": total, "parts": list(parts)}


def _fixed(exprs, q, name, unit) -> dict:
    return {"name": name, "unit": unit, "reads": [], "variants": [_variant(exprs, q.breakdown)], "pick": {"": 0}}


def _pick(record: dict, key: str, variant: dict) -> None:
    """Store *variant* once; *key* (the options' values joined by '|') points at it."""
    try:
        i = record["variants"].index(variant)
    except ValueError:
        i = len(record["variants"])
        record["variants"].append(variant)
    record["pick"][key] = i


def _memory(exprs, free, name, reads, values) -> dict:
    record = {"name": name, "unit": "bytes", "reads": list(reads), "variants": [], "pick": {}}
    for combo in product(*(values[r] for r in reads)):
        opts = dict(zip(reads, combo))
        breakdown = fit(lambda tp, dp: free.quantity(name, **opts, tp=tp, dp=dp))
        _pick(record, "|".join(map(str, combo)), _variant(exprs, breakdown))
    # the symbolic derivation against a numeric one, at the last combination (the most sharded)
    tp = _sharded(free, 3)
    check = dict(free.quantity(name, **opts, tp=tp, dp=5).breakdown)
    for path, e in breakdown:
        if sympy.expand(e.xreplace({TP: tp, DP: 5}) - check.get(path, 0)) != 0:
            raise SymgptError(f"internal: {name} {path} with tp and dp symbolic differs from tp = 3, dp = 5")
    return record


def _sharded(free, tp: int) -> int:
    """*tp*, or 1 where the model's layers cannot be split tensor-parallel at all (recurrent layers
    other than Mamba-2 mixers: the page then holds tp at 1, a constraint saying why)."""
    from ..derive.tensor_parallel_ssm import tp_refusal

    return 1 if tp_refusal(free, 2) else tp


def fit(derive) -> list[tuple[str, sympy.Expr]]:
    """The breakdown of ``derive(tp, dp)`` with tp and dp as symbols, each entry checked to be
    of the form the page evaluates (see the module docstring)."""
    out = list(derive(TP, DP).breakdown)
    for path, e in out:
        if not _tp_dp_form(e):
            raise SymgptError(f"internal: {path} is not of the form a + b/tp + c/dp + e/(tp·dp)")
    return out


@lru_cache(maxsize=4096)  # the same entries recur over the options' combinations
def _tp_dp_form(e) -> bool:
    """True when the expanded *e* is a sum of terms each free of tp and dp but for a factor
    1/tp, 1/dp or both."""
    for term in sympy.Add.make_args(expanded(e)):
        for f in sympy.Mul.make_args(term):
            base, exp = f.as_base_exp()
            if base in (TP, DP) and exp != -1 or base not in (TP, DP) and f.has(TP, DP):
                return False
    return True


def _total(exprs, free, memory, values) -> dict:
    record = {"name": TOTAL, "unit": "bytes", "reads": list(TOTAL_READS), "variants": [], "pick": {}}

    def pick_of(name, opts) -> int:
        m = memory[name]
        return m["pick"]["|".join(str(opts[r]) for r in m["reads"])]

    assembled: dict[tuple, dict] = {}  # the parts' variants -> their sum (assembled once)
    for combo in product(*(values[r] for r in TOTAL_READS)):
        opts = dict(zip(TOTAL_READS, combo))
        key = tuple(pick_of(n, opts) for n in ("memory.weights", "memory.gradients", "memory.optimizer",
                                               "memory.activations"))
        if key not in assembled:
            w, g, o, a = (memory[n]["variants"][i] for n, i in zip(
                ("memory.weights", "memory.gradients", "memory.optimizer", "memory.activations"), key))
            parts = [("weights", exprs.items[w["total"]]), ("gradients", exprs.items[g["total"]])]
            parts += [(p, exprs.items[i]) for p, i in o["parts"]]
            parts.append(("activations", exprs.items[a["total"]]))
            assembled[key] = _variant(exprs, parts)
        _pick(record, "|".join(map(str, combo)), assembled[key])
    # the assembled total is the derived one (two settings, tp = dp = 2 exercising both symbols)
    for opts in ({"precision": "fp32", "optimizer": "adamw", "zero": 0},
                 {"precision": "mixed-bf16", "optimizer": "adam8bit", "zero": 3}):
        v = record["variants"][record["pick"]["|".join(str(opts[r]) for r in TOTAL_READS)]]
        tp = _sharded(free, 2)
        derived = free.quantity(TOTAL, **opts, tp=tp, dp=2).expr
        if sympy.expand(exprs.items[v["total"]].xreplace({TP: tp, DP: 2}) - derived) != 0:
            raise SymgptError("internal: the page's memory.total differs from the derived one")
    return record


def _inference(exprs, free, quantities) -> dict | None:
    """Append the inference quantities (F_peak, BW_mem symbolic) to *quantities*; return each
    hardware profile's values of the two, or None for a model the inference costs do not cover."""
    from ..derive.inference_setup import setup
    from ..core.hardware import names

    from ..derive.recurrent import recurrent_ops

    # a model with recurrent layers: their state beside the KV cache
    shown = INFERENCE + ("inference.state",) if recurrent_ops(free.arch) else INFERENCE
    try:
        qs = [free.quantity(name) for name in shown]
    except SymgptError:
        return None
    for name, q in zip(shown, qs):
        quantities.append(_fixed(exprs, q, name, q.unit))
    decode = qs[INFERENCE.index("inference.decode.time")]
    quantities.append({"name": TOKENS_PER_S, "unit": "tokens/s", "reads": [], "pick": {"": 0},
                       "variants": [{"total": exprs.add(B / decode.expr), "parts": []}]})
    out = {}
    for name in names():
        s = setup(free, hardware=name)
        out[name] = {"title": s.device.title,
                     "values": {sym.name: str(s.bindings[sym]) for sym in (F_peak, BW_mem)}}
    return out


def _serving(exprs, free, quantities, hardware) -> dict | None:
    """Append the paged-KV serving quantities (``derive.serving``: budget, bytes per sequence and
    the sequences that fit) with the block size and the device's memory symbolic; add each
    profile's memory to its values. None (nothing added) for a model ``symgpt serve`` refuses."""
    from ..derive import serving
    from ..derive.inference_setup import setup

    if hardware is None:
        return None
    opts = {"attention": "flash"}
    try:
        p = serving.paged(free, serving.BLOCK, **opts)
        parts = serving.budget_parts(free, serving.UTILIZATION, serving.WORKSPACE_TOKENS,
                                     device_memory=1, **opts)
    except SymgptError:
        return None
    symbolic = serving.Paged(p.setup, BLOCK_SIZE, p.layers, p.T)   # the same blocks, block size a symbol
    budget = [("memory·utilization", serving.UTILIZATION * DEVICE_MEMORY)] + parts[1:]
    per = symbolic.sequence_parts()
    total = sympy.floor(sympy.Add(*[e for _, e in budget]) / sympy.Add(*[e for _, e in per]))
    for name, breakdown in (("serving.kv_budget", budget), ("serving.kv_per_sequence", per)):
        quantities.append({"name": name, "unit": "bytes", "reads": [], "pick": {"": 0},
                           "variants": [_variant(exprs, breakdown)]})
    quantities.append({"name": "serving.max_sequences", "unit": "sequences", "reads": [], "pick": {"": 0},
                       "variants": [{"total": exprs.add(total), "parts": []}]})
    for name in hardware:
        s = setup(free, hardware=name)
        if s.device is None or s.device.memory is None:
            raise SymgptError(f"internal: the profile {name} has no memory for the serving panel")
        hardware[name]["values"][DEVICE_MEMORY.name] = str(int(s.device.memory))
    return {"block": serving.BLOCK, "utilization": str(serving.UTILIZATION),
            "workspace_tokens": serving.WORKSPACE_TOKENS}


class UnboundSizes(SymgptError):
    """A page evaluates numbers: a model with sizes left symbolic (a family name) has none."""


# --- inputs, ops, plots ------------------------------------------------------------------------
def _symbols(model, exprs) -> list[dict]:
    used = set()
    for e in exprs.items:
        used |= {s.name for s in e.free_symbols}
    missing = sorted(used - set(model.sizes) - {"tp", "dp"} - set(HARDWARE_SYMBOLS)
                     - {BLOCK_SIZE.name, DEVICE_MEMORY.name})
    if missing:
        raise UnboundSizes(f"{model.name}: bind every size for a page (unbound: {', '.join(missing)}; "
                          f"e.g. --set {missing[0]}=...)")
    return [{"name": n, "value": str(int(model.sizes[n])), "meaning": MEANING[n]}
            for n in CANONICAL if n in model.sizes]


def _ops(arch, exprs) -> list[dict]:
    out = []
    for node, a in arch.ops():
        out.append({"path": node, "label": a.get("label") or node, "op": a["op"], "group": a["group"],
                    "inputs": [[exprs.add(x) for x in s] for s in arch.input_shapes(node)],
                    "output": [exprs.add(x) for x in a["shape"]]})
    return out


def _plots(free, exprs) -> dict:
    from ..query.crossover import crossover
    from ..core.symbols import T

    fwd = free.quantity("flops.forward")
    cx = None  # no plot against T for a model without one sequence length T (T_enc, T_dec; ViT)
    c = None
    if T in fwd.expr.free_symbols:
        try:
            c = crossover(fwd, T)
        except SymgptError:  # not solved in closed form (a chunked scan's ceiling(T/Q) terms): no mark
            c = None
    if c is not None:
        cx = {"fast": exprs.add(c.fast), "slow": exprs.add(c.slow), "fast_label": c.fast_label,
              "slow_label": c.slow_label, "solution": None if c.solution is None else exprs.add(c.solution),
              "notes": list(c.notes)}
    shares = free.params.grouped(2)
    return {"crossover": cx,
            "shares": [(p, exprs.add(e)) for p, e in shares],
            "memory": ["weights", "gradients", "optimizer", "activations"]}


# --- files -------------------------------------------------------------------------------------
def html(model, **options) -> str:
    """The page of *model* as one self-contained HTML file (text)."""
    from ..render.html import page_html

    return page_html(page(model, **options))


def write(model, folder, **options) -> list[str]:
    """Report part: ``html/index.html`` -- for a model whose sizes are all bound (a family
    name with sizes left symbolic gets the other parts of the report and no page)."""
    try:
        page = html(model, **options)
    except UnboundSizes:
        return []
    write_atomic(folder / FILE, page)
    return [FILE]
