"""What ``symgpt serve`` prints (shared by its paged-KV and its state-slot paths)."""

from __future__ import annotations

from .common import emit


def write(args, m, opts, qs, notes, sim, extra, hint) -> int:
    """Print ``symgpt serve``'s answers (*qs*, *notes*, a simulation *sim*) as text or, with
    --json, one object whose convention is the quantities' (vLLM's paged KV, or its hybrid layout
    of state slots beside the KV blocks)."""
    from ..render.jsonout import dumps
    from ..render.serving_text import serving_text
    from .costargs import payload

    from ..derive.mla_absorbed import NOTES, has_mla

    if opts.get("mla") == "absorbed" and has_mla(m.arch):
        notes.append(NOTES["absorbed"])   # the step times' form (derive.mla_absorbed)
    if args.json:
        shown = {k: (str(v) if not isinstance(v, (bool, int, str)) else v) for k, v in opts.items()}
        shown.update(extra)
        hybrid = bool(qs) and all(q.convention == "vllm-hybrid" for q in qs)
        out = payload(m, "vllm-hybrid" if hybrid else "vllm-paged", shown, qs)
        if notes:
            out["notes"] = notes
        if sim is not None:
            out["simulation"] = sim
        emit(dumps(out))
        return 0
    emit(serving_text(m, qs, notes, hint))
    if sim is not None:
        from ..simulate import command

        emit("\n" + command.render(sim))
    return 0
