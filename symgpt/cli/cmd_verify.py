"""symgpt verify MODEL: the op graph against the checkpoint itself (safetensors headers only)."""

from __future__ import annotations

from .common import add_json, emit

HELP = "compare the op graph's parameters with a safetensors checkpoint's tensors (headers only)"
DESCRIPTION = (
    "Compare every tensor a safetensors checkpoint holds with the op graph of its config.json: "
    "shapes and count per role, the total, and the bytes at the checkpoint's dtypes against "
    "memory.weights. Only the headers are read, never the weights. Exit status: 0 when everything "
    "matches, 1 when something differs (each difference is printed with both sides), 2 on bad input.")


def add_arguments(p):
    p.add_argument("model", metavar="MODEL",
                   help="a checkpoint folder (config.json with model.safetensors.index.json or "
                   "*.safetensors), a .safetensors file next to its config.json, or a Hugging Face Hub "
                   "id (org/name[@revision]; hf:NAME forces the Hub): its config.json and the "
                   "safetensors headers are fetched, not the weights")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                   help="set a flag or bind a size before comparing (tied=true: T5 as transformers 5 "
                   "builds it); repeatable")
    p.add_argument("--head", metavar="HEAD", help="the head an encoder or encoder-decoder counts (as in params)")
    add_json(p)


def _locate(text: str):
    """(model source for load, checkpoint reader) of MODEL."""
    from pathlib import Path

    from ..core.errors import SymgptError, printable

    path = Path(text)
    try:
        exists = not text.startswith("hf:") and path.exists()
    except (OSError, ValueError):
        exists = False
    if exists:
        from ..model.checkpoint import read_local

        folder = path if path.is_dir() else path.parent
        if not (folder / "config.json").is_file():
            raise SymgptError(f"{printable(str(folder))} has no config.json next to the checkpoint")
        return folder, (lambda: read_local(path))
    from ..model.hub import looks_like_id, parse

    if text.startswith("hf:") or looks_like_id(text):
        hub_id = parse(text)
        from ..model.checkpoint import read_hub

        return f"hf:{hub_id}", (lambda: read_hub(hub_id))
    raise SymgptError(f"{printable(text[:120])}: no such checkpoint folder or file, and not a Hub id "
                      "(verify needs a checkpoint: a folder with config.json and *.safetensors, or org/name)")


def _shapes(c) -> str:
    if not c:
        return "none"
    return " + ".join(f"{n} × ({', '.join(str(s) for s in shape)}{',' if len(shape) == 1 else ''})"
                      for shape, n in sorted(c.items()))


def run(args) -> int:
    from ..model.model import load
    from ..model.verify import compare
    from .common import settings

    source, read = _locate(args.model)
    m = load(source, **settings(args))
    r = compare(m, read())
    if args.json:
        from ..render.jsonout import dumps

        emit(dumps(_json(r)))
        return 0 if r.ok else 1
    emit(_text(r), fit=False)
    return 0 if r.ok else 1


def _text(r) -> str:
    ck = r.checkpoint
    lines = [f"verify {r.model.name} [{r.model.family.name}] against {ck.source} "
             f"({ck.files} file{'s' if ck.files != 1 else ''}, {len(ck.tensors):,} tensors; "
             "linear weights shown as the checkpoint stores them)"]
    width = max([len(str(row.slot)) for row in r.rows] + [10])
    for row in r.rows:
        names = ", ".join(row.names) if row.names else "no tensor"
        if row.ok:
            lines.append(f"  ok    {str(row.slot):<{width}}  {_shapes(row.graph)}  {names}")
        else:
            why = ""
            if row.slot.role == "head" and not row.graph and r.model.flags.get("tied"):
                why = (" (the graph ties the head to the token embedding, tied=true; --set tied=false "
                       "counts a head of its own, unless the file stores a copy of the tied table)")
            lines.append(f"  DIFF  {str(row.slot):<{width}}  graph {_shapes(row.graph)}; "
                         f"checkpoint {_shapes(row.checkpoint)}  {names}{why}")
    for t in r.unmapped:
        lines.append(f"  DIFF  not mapped to the graph: {t.name} {t.dtype} {_shapes({t.shape: 1})}")
    for t, slot, ok in r.tied:
        state = "ok  " if ok else "DIFF"
        lines.append(f"  {state}  {t.name}: a stored copy of the tied {slot}"
                     + ("" if ok else f", but its shape {t.shape} is not the graph's") + " (not counted)")
    if r.buffers:
        shown = sorted({_pattern(t.name) for t in r.buffers})
        lines.append(f"  note  {len(r.buffers)} buffer tensor(s), not parameters (not counted): {', '.join(shown)}")
    same = r.graph_total == r.checkpoint_total
    lines.append(f"parameters: graph {r.graph_total:,}; checkpoint {r.checkpoint_total:,}  {'ok' if same else 'DIFF'}")
    if r.graph_bytes is None:
        lines.append(f"bytes: checkpoint {r.checkpoint_bytes:,}; {r.bytes_note}")
    else:
        same = r.graph_bytes == r.checkpoint_bytes
        lines.append(f"bytes: {r.bytes_note} {r.graph_bytes:,}; checkpoint {r.checkpoint_bytes:,}  "
                     f"{'ok' if same else 'DIFF'}")
    differences = sum(not row.ok for row in r.rows) + len(r.unmapped) + sum(not ok for _, _, ok in r.tied)
    if r.ok:
        lines.append("result: the checkpoint matches the graph")
    else:
        lines.append(f"result: the checkpoint differs from the graph ({differences} role(s) or tensor(s) differ"
                     + ("" if differences else "; totals differ") + ")")
    return "\n".join(lines)


def _pattern(name):
    from ..model.tensornames import pattern

    return pattern(name)


def _json(r) -> dict:
    def shapes(c):
        return [{"shape": list(s), "count": n} for s, n in sorted(c.items())]

    return {
        "model": r.model.name, "family": r.model.family.name, "checkpoint": r.checkpoint.source,
        "match": r.ok,
        "roles": [{"stack": row.slot.stack, "role": row.slot.role, "local": row.slot.local, "ok": row.ok,
                   "graph": shapes(row.graph), "checkpoint": shapes(row.checkpoint), "names": row.names}
                  for row in r.rows],
        "unmapped": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape)} for t in r.unmapped],
        "tied_copies": [{"name": t.name, "of": str(slot), "ok": ok} for t, slot, ok in r.tied],
        "buffers": [t.name for t in r.buffers],
        "params": {"graph": r.graph_total, "checkpoint": r.checkpoint_total},
        "bytes": {"graph": r.graph_bytes, "checkpoint": r.checkpoint_bytes, "how": r.bytes_note},
    }
