"""A canonical text dump of an architecture's graph, and the cases the graph-identity test covers.

``dump(arch)`` writes every node in declaration order (path, kind, op repr, shape, inputs, params,
group, role, label, cache flag), every edge, every group, the constraints and the output/loss
nodes; two graphs are the same exactly when their dumps are. ``cases()`` names the graphs: every
preset, every family at its defaults with nothing and with every optional size bound, each flag of
each family set to each other value it takes, and pairs of the generic decoder's flags. A case
that raises dumps its error line, so the errors stay the same too.

    python tests/graphdump.py tests/golden/graphs.sha256      # regenerate the fixture
    python tests/graphdump.py --full CASE                      # print one case's dump
    python tests/graphdump.py --check tests/golden/graphs.sha256  # every case against the fixture
"""

from __future__ import annotations

import hashlib
import itertools
import sys


_TEXT: dict = {}


def _s(x) -> str:
    """str(x), remembered (the same shapes and ops recur across cases; SymPy prints slowly)."""
    try:
        return _TEXT[x]
    except KeyError:
        out = _TEXT[x] = repr(x) if not isinstance(x, tuple) else str(x)
        return out
    except TypeError:  # unhashable
        return repr(x)


def dump(arch) -> str:
    g = arch.graph
    out = [f"arch {arch.name} output={arch.output} loss={arch.loss}"]
    for n in g.nodes:
        a = g.nodes[n]
        kind = a["kind"]
        if kind == "param":
            out.append(f"param {n} shape={_s(a['shape'])} owner={a['owner']} local={a['local']} group={a['group']}")
            continue
        op = _s(a.get("op")) if kind == "op" else a.get("dtype")
        out.append(f"{kind} {n} op={op} shape={_s(a['shape'])} inputs={a['inputs']} "
                   f"params={sorted(a['params'].items())} "
                   f"group={a['group']} role={a.get('role')} label={a.get('label')!r} cached={a.get('cached')}")
    out.append("order " + " ".join(arch.order))
    for u, v in g.edges:
        e = g.edges[u, v]
        out.append(f"edge {u} -> {v} " + " ".join(f"{k}={_s(e[k]) if k == 'shape' else e[k]}" for k in sorted(e)))
    for name, grp in arch.groups.items():
        out.append(f"group {name} {_s(grp)}")
    for c in arch.constraints:
        out.append(f"constraint {_s(c)}")
    out.append(f"flags {sorted(arch.flags.items())}")
    return "\n".join(out) + "\n"


OPTIONAL_BOUND = ("d_ff", "h_kv", "d_head", "T_max", "W", "E", "k")


def _values(default, choices):
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, str) or choices:
        return [c for c in choices if c != default]
    return [None, 1, 2, 25, 64] if default is None else [None, default + 1, 2 * default]


def cases():
    """name -> a function building that case's Arch."""
    from symgpt.families import MODULES, families, presets
    from symgpt.model.model import load

    PRESETS = presets()
    builtin = {n for _, names in MODULES for n in names}

    out = {}
    for p in PRESETS:
        out[f"preset {p}"] = (lambda p=p: load(p).arch)
    for name, fam in families().items():
        if name not in builtin:  # a family a test registered
            continue
        for bound in (frozenset(), frozenset(OPTIONAL_BOUND)):
            tag = "bound" if bound else "free"
            out[f"family {name} {tag}"] = (lambda fam=fam, bound=bound: fam.build(dict(fam.flags), bound))
            for flag, default in fam.flags.items():
                for v in _values(default, fam.choices.get(flag, ())):
                    out[f"family {name} {tag} {flag}={v}"] = (
                        lambda fam=fam, bound=bound, flag=flag, v=v: fam.build({**fam.flags, flag: v}, bound))
    dec = families()["decoder"]
    singles = [(f, v) for f, dv in dec.flags.items() for v in _values(dv, dec.choices.get(f, ()))[:2]]
    for (f1, v1), (f2, v2) in itertools.combinations(singles, 2):
        if f1 == f2:
            continue
        out[f"pair decoder {f1}={v1} {f2}={v2}"] = (
            lambda f1=f1, v1=v1, f2=f2, v2=v2: dec.build({**dec.flags, f1: v1, f2: v2}, frozenset(OPTIONAL_BOUND)))
    return out


def text(build) -> str:
    try:
        return dump(build())
    except Exception as e:  # noqa: BLE001  (a flag value a family refuses: its error is part of the case)
        return f"error {type(e).__name__} {e}\n"


def in_suite(name: str) -> bool:
    """The cases the suite checks (``SYMGPT_ALL_PRESETS=1`` or ``python tests/graphdump.py --check``
    check every case): every preset, every family at its defaults (free and with every optional size
    bound), each flag value with the optional sizes bound, and the decoder's flag pairs. Left to the
    full check: each flag value again with the sizes free (the same builder's code path, a quarter
    of the minutes the full check takes)."""
    parts = name.split(" ")
    return not (parts[0] == "family" and parts[2] == "free" and len(parts) > 3)


def digests(full: bool = True) -> dict[str, str]:
    return {name: hashlib.sha256(text(b).encode()).hexdigest()[:20] for name, b in sorted(cases().items())
            if full or in_suite(name)}


HEADER = ("# sha256 (first 20 hex digits) of tests/graphdump.py's canonical dump of each case's graph.\n"
          "# Written by `python tests/graphdump.py tests/golden/graphs.sha256`; first from the tree\n"
          "# before families/attention.py and families/ffn.py declared every family's attention and FFN\n"
          "# (commit 9e1b2be), so the builders were checked to leave every graph as it was.\n")


def write_all(path) -> None:
    """Every case's full dump into one file (for diffing two trees)."""
    with open(path, "w", encoding="utf-8") as f:
        for name, b in sorted(cases().items()):
            f.write(f"=== {name}\n{text(b)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--full"]:
        sys.stdout.write(text(cases()[" ".join(sys.argv[2:])]))
    elif sys.argv[1:2] == ["--all"]:
        write_all(sys.argv[2])
    elif sys.argv[1:2] == ["--check"]:
        with open(sys.argv[2], encoding="utf-8") as f:
            want = dict(reversed(line.rstrip("\n").split(" ", 1)) for line in f if not line.startswith("#"))
        got = digests()
        bad = sorted(n for n in set(want) | set(got) if want.get(n) != got.get(n))
        print(f"{len(got)} cases, {len(bad)} differ" + "".join(f"\n  {n}" for n in bad[:20]))
        sys.exit(1 if bad else 0)
    else:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(HEADER)
            for name, h in digests().items():
                f.write(f"{h} {name}\n")

