"""``symgpt serve`` for models with recurrent layers: vLLM's state slots beside the paged KV
blocks (``symgpt.derive.serving_state``); what that layout does not cover is refused in one line."""

from __future__ import annotations

#: options of ``symgpt serve`` not modelled with recurrent layers: (attribute, flag)
NOT_MODELLED = (("prefix", "--prefix (vLLM turns prefix caching off for these models)"),
                ("draft", "--draft (speculative decoding keeps extra state slots)"),
                ("disaggregate", "--disaggregate"), ("price_per_hour", "--price-per-hour"),
                ("trace", "--trace"), ("requests", "--requests"))


def run(args, m, opts, cap, block, extra, ep) -> int:
    from ..core.errors import SymgptError
    from ..derive import serving_state as st
    from .serve_output import write

    asked = [flag for attr, flag in NOT_MODELLED if getattr(args, attr, None) not in (None, False)]
    if ep:
        asked.append("expert parallelism (--ep, --dp-attention)")
    if asked:
        raise SymgptError(f"{m.name}: {asked[0]} is not modelled for recurrent layers; the capacity is (symgpt serve "
                          f"{m.name} --hardware NAME)")
    qs = [st.block_bytes(m, block, **opts), st.kv_per_sequence(m, block, **opts), st.state_per_sequence(m, block, **opts)]
    sized = "hardware" in opts or "device_memory" in opts
    if sized:
        qs[2:2] = [st.kv_budget(m, **cap, **opts), st.max_sequences(m, **cap, **opts)]
    notes = ["step times, cost and energy per token are not priced here for recurrent layers (symgpt infer prices "
             "a decode step with their state)"]
    hint = "" if sized else "give --hardware NAME (or --device-memory BYTES) for the sequences that fit"
    return write(args, m, opts, qs, notes, None, extra, hint)
