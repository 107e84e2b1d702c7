"""Context of the ``steps`` section: the forward pass as numbered steps in prose.

Built from the shape trace and the op graph, never written for one model: each op is put in a
*phase* of the pass (token lookup, positions, attention input, heads, attention, output
projection, residual, feed-forward, final norm, logits) by its kind and its role (what the op
is, ``roles.QUERY``, whatever its family names it), the phases become numbered steps in order of first
appearance, and the repeated block is written once, followed by one step that stands for the
other copies ("Steps 10 through 20: repeat for layers 2 through 12"). Each op becomes an *item*
(kind, names, shapes, weight shape) that ``templates/steps.tex`` turns into a sentence.

Shapes are concrete where the sizes are bound. With B = 1 the batch dimension is dropped, as a
worked example for one sequence writes them: ``(3, 768)``, heads ``(12, 3, 64)``, one head
``(3, 64)``.
"""

from __future__ import annotations

import sympy

from ..graph import roles as R
from ..derive.shapes import trace
from ..core.symbols import B as B_, T as T_, as_expr
from ..render.latex import Tex, tex_concrete_shape, tex_expr, tex_shape
from ..render.latex_escape import tex_escape
from ..render.latex_numbers import tex_int
from .latex_sections import header

_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
#: role -> the math name of the op's output
_NAMES = {R.QUERY: "Q", R.KEY: "K", R.VALUE: "V", R.QUERY_HEADS: "Q", R.KEY_HEADS: "K",
          R.VALUE_HEADS: "V", R.OUT: r"\text{attn\_output}", R.FFN_DOWN: r"\text{ffn\_output}",
          R.COMBINE: r"\text{ffn\_output}"}
#: role -> the name of a slice of a fused projection that has no entry above
_SLICE_NAMES = {R.FFN_GATE: "GATE", R.FFN_UP: "UP"}
_ATTENTION = ("scale", "causal_mask", "softmax", "alibi", "dropout")


class Shape(Tex):
    """A shape as LaTeX, with its dimensions (``.dims``) kept for tests and callers."""

    dims: tuple = ()


def _role(arch, node: str) -> str:
    """The role of *node* (``attention.q``), or, for an op without one, its path."""
    return arch.graph.nodes[node].get("role") or node


class _Ctx:
    def __init__(self, model, notation):
        self.m, self.arch, self.nota = model, model.arch, notation
        self.sym = {t.name: t.shape for t in trace(model.arch)}
        self.one = model.value(B_) == 1
        self.names: dict[str, str] = {}

    def value(self, expr):
        return self.m.value(as_expr(expr))

    def math(self, expr) -> Tex:
        """The value (``3{,}072``) where bound, else the expression, for math mode."""
        v = self.value(expr)
        return Tex(tex_int(v)) if v is not None else tex_expr(as_expr(expr), self.nota)

    def num(self, expr) -> Tex:
        """The same for running text: an expression goes in ``$...$``."""
        v = self.value(expr)
        return Tex(tex_int(v)) if v is not None else Tex(f"${tex_expr(as_expr(expr), self.nota)}$")

    def shape(self, dims_sym, heads: bool = False) -> Shape:
        """A shape as printed: B dropped when B = 1; *heads*: one head of one sequence."""
        dims = tuple(as_expr(x) for x in dims_sym)
        if dims and dims[0] == B_ and (self.one or heads):
            dims = dims[1:]
        if heads:
            dims = dims[1:]
        concrete = tuple(x.xreplace(self.m.bindings) for x in dims)
        if all(x.is_number for x in concrete):
            s = Shape(tex_concrete_shape(concrete))
            s.dims = tuple(int(x) for x in concrete)
        else:
            s = Shape(tex_shape(dims, self.nota))
            s.dims = dims
        return s

    def out(self, node, heads: bool = False) -> Shape:
        return self.shape(self.sym[node], heads)

    def weight(self, node, local="weight") -> Shape | None:
        a = self.arch.graph.nodes[node]
        pnode = a["params"].get(local)
        if pnode is None:
            return None
        edge = self.arch.graph.edges[pnode, node]
        return self.shape(edge["shape"])

    def name(self, node) -> Tex:
        return Tex(self.names.get(node) or r"\text{" + tex_escape(self.arch.graph.nodes[node]["label"]) + "}")


def _phase(c: _Ctx, node: str) -> str:
    arch = c.arch
    a = arch.graph.nodes[node]
    kind, role = a["op"].kind, _role(arch, node)
    part = R.part_of(role)
    if a["group"] is None:
        if kind == "embedding" or (part == "embedding" and kind == "scale") or role == R.PROMPT_TOKENS:
            return "token"
        if kind == "position_embedding" or role in (R.EMBEDDING_ADD, R.DROPOUT):
            return "position"
        if kind == "rotary_table":
            return "rotary"
        if role == R.FINAL_NORM:
            return "final"
        if role == R.HEAD:
            return "logits"
        if kind == "cross_entropy":
            return "loss"
        return role
    if kind == "add":
        return "residual:" + role
    if kind in ("layernorm", "rmsnorm"):
        users = [u for u in arch.graph.successors(node) if arch.graph.nodes[u].get("kind") == "op"
                 and arch.graph.nodes[u]["group"] is not None and arch.graph.nodes[u]["op"].kind != "add"]
        if users:
            return _phase(c, users[0])
        src = a["inputs"][0]
        return _phase(c, src) if arch.graph.nodes[src]["group"] is not None else "attn_in"
    if kind == "dropout":  # in the step of the op whose output it drops
        src = a["inputs"][0]
        return _phase(c, src) if arch.graph.nodes[src].get("kind") == "op" else role
    if part == "attention":
        if kind in ("split_heads", "rotary", "repeat_kv"):
            return "heads"
        if kind == "matmul" or kind in _ATTENTION:
            return "attention"
        if kind == "merge_heads" or role == R.OUT:
            return "attn_out"
        return "attn_in"
    if part == "ffn":
        return "ffn"
    if part == "cross_attention":  # an encoder-decoder's attention to the encoder output
        return "cross_attention"
    src = a["inputs"][0] if a["inputs"] else None
    if a.get("role") is None and src is not None and arch.graph.nodes[src].get("kind") == "op" \
            and arch.graph.nodes[src]["group"] is not None:
        return _phase(c, src)  # an op without a role: in the step of the op it reads
    return role


def _item(c: _Ctx, node: str) -> dict:
    """One op as the data of its sentence."""
    arch, a = c.arch, c.arch.graph.nodes[node]
    op, role = a["op"], _role(arch, node)
    ins = list(a["inputs"])
    item = {"kind": op.kind, "role": role, "node": node, "out": c.out(node),
            "input": c.name(ins[0]) if ins else None,
            "in_shape": c.out(ins[0]) if ins else None,
            "label": a["label"], "args": [c.name(i) for i in ins]}
    chain = arch.group_chain(a["group"])
    inner = [g for g in chain[:-1] if sympy.expand(g.active - g.repeat) != 0]
    item["experts"] = {"active": c.num(inner[0].active), "repeat": c.num(inner[0].repeat)} if inner else None
    if op.kind == "embedding":
        item["table"] = c.weight(node)
    elif op.kind == "position_embedding":
        item["table"] = c.weight(node)
        t = c.value(T_)
        item["positions"] = Tex(", ".join(str(i) for i in range(int(t)))) if t is not None and t <= 8 else None
        item["offset"] = Tex(str(op.offset)) if op.offset else None
    elif op.kind == "linear":
        item["weight"] = c.weight(node)
        item["tied"] = bool(arch.graph.edges[a["params"]["weight"], node].get("tied"))
        item["width_in"], item["width_out"] = c.num(op.n_in), c.num(op.n_out)
        if role == R.HEAD:
            t_dims = c.sym[node]
            last = tuple(x for i, x in enumerate(t_dims) if i != len(t_dims) - 2)
            item["last"] = c.shape(last)
    elif op.kind == "split_heads":
        item["heads"], item["d_head"] = c.num(op.heads), c.num(op.d_head)
        item["one_head"] = c.value(op.heads) == 1
        item["width"] = c.num(op.heads * op.d_head)
    elif op.kind == "repeat_kv":
        item["groups"] = c.num(op.groups)
        item["kv_heads"] = c.num(as_expr(c.sym[ins[0]][1]))
        item["one_head"] = c.value(as_expr(c.sym[ins[0]][1])) == 1
        item["q_heads"] = c.num(as_expr(c.sym[node][1]))
    elif op.kind == "merge_heads":
        item["heads"] = c.num(as_expr(c.sym[ins[0]][1]))
    elif op.kind == "topk":
        item["k"] = c.num(op.k)
    elif op.kind == "scale":
        factor = as_expr(op.factor)
        v = c.value(factor)
        divides = v < 1 if v is not None else R.part_of(role) == "attention"
        inv = 1 / factor if divides else factor  # the attention scale divides by sqrt(d_head)
        under = sympy.powsimp(sympy.expand(inv ** 2))
        item["root"] = c.math(inv)
        item["under"] = c.math(under) if all(p.exp.is_integer for p in under.atoms(sympy.Pow)) else None
        item["numeric"] = c.value(inv) is not None
    return item


def _group(c: _Ctx, items: list[dict]) -> list[dict]:
    """Consecutive items of one kind with the same shapes told together (Q, K and V)."""
    out: list[dict] = []
    for it in items:
        prev = out[-1] if out else None
        if (prev and it["kind"] in ("slice", "split_heads", "rotary", "repeat_kv") and prev["kind"] == it["kind"]
                and (it["kind"] == "slice" or prev["out"] == it["out"] and prev["in_shape"] == it["in_shape"])):
            prev["names"].append(c.name(it["node"]))
            prev["inputs"].append(it["input"])
            prev["shapes"].append(it["out"])
            prev["count"] = Tex(_WORDS.get(len(prev["names"]), str(len(prev["names"]))))
            continue
        it = {**it, "names": [c.name(it["node"])], "inputs": [it["input"]], "shapes": [it["out"]], "count": None}
        out.append(it)
    for it in out:
        it["names_tex"], it["inputs_tex"] = _listing(it["names"]), _listing(it["inputs"])
        it["same"] = len(set(it["shapes"])) == 1
        it["parts_tex"] = _listing([f"{n}$ of shape ${sh}" for n, sh in zip(it["names"], it["shapes"])])
    gated = any(it["role"] == R.FFN_GATE for it in out)
    first = next((it for it in out if it["experts"]), None)
    for it in out:
        it["gated"], it["first_expert"] = gated, it is first
    return out


def _listing(names) -> Tex:
    """``$Q$, $K$, and $V$`` (math names joined as prose)."""
    items = [f"${n}$" for n in names if n is not None]
    if len(items) <= 2:
        return Tex(" and ".join(items))
    return Tex(", ".join(items[:-1]) + ", and " + items[-1])


def _attention(c: _Ctx, nodes: list[str]) -> dict:
    """The attention step as one item: per-head shapes, the scale, the mask, the formula."""
    arch = c.arch
    kinds = {arch.graph.nodes[n]["op"].kind: n for n in nodes}
    scores = next(n for n in nodes if getattr(arch.graph.nodes[n]["op"], "tag", "") == "attention_scores")
    values = next(n for n in nodes if getattr(arch.graph.nodes[n]["op"], "tag", "") == "attention_values")
    sc_op = arch.graph.nodes[scores]["op"]
    q_in = arch.graph.nodes[scores]["inputs"][0]
    scale = _item(c, kinds["scale"]) if "scale" in kinds else None
    window = sc_op.window
    return {"kind": "attention", "q_head": c.out(q_in, heads=True), "scores": c.out(scores, heads=True),
            "out_head": c.out(values, heads=True), "scale": scale, "causal": bool(sc_op.causal),
            "window": c.num(window) if window is not None else None,
            "alibi": "alibi" in kinds, "dropout": "dropout" in kinds, "names": [], "experts": None}


def _name_outputs(c: _Ctx, order: list[str]) -> None:
    """Math names: the residual stream x_0, x_1, ... (x_0 enters the first block), normalised
    copies with a hat, Q, K, V and their heads, the branch outputs."""
    arch, index = c.arch, 0
    # the first grouped op that reads an input (a held tower's parameters read none)
    first = next((n for n in order if arch.graph.nodes[n]["group"] is not None and arch.graph.nodes[n]["inputs"]),
                 None)
    if first is not None:
        src = arch.graph.nodes[first]["inputs"][0]
        c.names[src] = "x_0"
    for n in order:
        a = arch.graph.nodes[n]
        if a["kind"] != "op" or a["group"] is None:
            continue
        kind, role = a["op"].kind, _role(arch, n)
        if kind == "add":
            index += 1
            c.names[n] = f"x_{{{index}}}" if index > 9 else f"x_{index}"
        elif kind in ("layernorm", "rmsnorm"):
            base = c.names.get(a["inputs"][0], "x")
            simple = "_" in base and not base.startswith("\\")  # x_0, not \text{attn\_output}
            c.names[n] = rf"\hat{{{base.split('_')[0]}}}_{base.split('_', 1)[1]}" if simple else rf"\hat{{{base}}}"
        elif role in _NAMES:
            c.names[n] = _NAMES[role]
        elif kind in ("rotary", "repeat_kv"):
            c.names[n] = c.names.get(a["inputs"][0], "")
        elif kind == "slice":
            c.names[n] = _SLICE_NAMES.get(role, n.rsplit("/", 1)[-1].upper())


def steps(model, notation, **bindings) -> dict:
    """The forward pass as numbered steps, the block told once, then repeated."""
    m = model.with_(**bindings) if bindings else model
    m.shapes()  # the model's constraints at these sizes (T <= T_max, ...)
    c = _Ctx(m, notation)
    arch = m.arch
    ops = [n for n, _ in arch.ops()]
    _name_outputs(c, ops)
    phases: dict[tuple, list[str]] = {}
    for n in ops:
        chain = arch.group_chain(arch.graph.nodes[n]["group"])
        top = chain[-1].name if chain else None
        phases.setdefault((top, _phase(c, n)), []).append(n)
    out, number, residuals, layers, one_layer = [], sympy.Integer(1), 0, None, False
    keys = list(phases)
    for i, (top, phase) in enumerate(keys):
        nodes = phases[(top, phase)]
        if phase == "loss":
            continue
        if phase == "attention" and top is not None:
            items = [_attention(c, nodes)]
        else:
            items = _group(c, [_item(c, n) for n in nodes])
        key = phase.split(":")[0]
        if key == "residual":
            residuals += 1
        first_kind = arch.graph.nodes[nodes[0]]["op"].kind
        out.append({"number": c.num(number), "phase": key, "ops": items, "block": top is not None,
                    "prenorm": first_kind in ("layernorm", "rmsnorm"), "norm": first_kind,
                    "ordinal": residuals, "shape": items[-1].get("out"), "closes": None})
        number += 1
        if top is not None and (i + 1 == len(keys) or keys[i + 1][0] != top):
            g = arch.groups[top]
            out[-1]["closes"] = (g.label or g.name).lower()
            layers = c.num(g.repeat)
            one_layer = c.value(g.repeat) == 1
            more = sympy.expand(g.repeat - 1)
            known = c.value(more)
            if (known if known is not None else more) != 0:  # the other copies: one step each
                last = sympy.expand(number + more - 1)
                out.append({"number": c.num(number), "phase": "repeat", "ops": [],
                            "last": c.num(last), "single": known == 1, "layers_to": c.num(g.repeat),
                            "more": c.num(more), "plural": known != 1, "label": g.label or g.name,
                            "shape": out[-1]["shape"], "block": False})
                number = last + 1
    ids = next(n for n in arch.order if arch.graph.nodes[n]["kind"] == "input")
    sizes = [(Tex(notation.symbol(k)), Tex(tex_int(m.sizes[k]))) for k in ("d", "L", "h", "h_kv")
             if k in m.sizes]
    return {**header(m, notation), "steps": out, "ids": c.out(ids),
            "layers": layers, "one_layer": one_layer, "batch": c.num(B_), "tokens": c.num(T_), "one": c.one, "sizes": sizes,
            "batch_m": c.math(B_), "tokens_m": c.math(T_),
            "bound": c.value(B_) is not None and c.value(T_) is not None,
            "loss": any(p == "loss" for _, p in keys), "parallel": bool(arch.flags.get("parallel")),
            "B": Tex(notation.symbol("B")), "T": Tex(notation.symbol("T"))}


__all__ = ["steps", "Shape"]
