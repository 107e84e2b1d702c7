"""Named configurations, as a data table: family, sizes, flags, source and caveats.

Sizes use the canonical symbol names. A preset whose published row is internally inconsistent
says so in ``note`` instead of silently picking.
"""

from __future__ import annotations

from ..core.errors import SymgptError
from .preset import Preset
from .presets_decoder import ROWS as DECODER_ROWS
from .presets_recent import ROWS as RECENT_ROWS
from .presets_encdec import ROWS as ENCDEC_ROWS


def _gpt2(name, L, h, d, source, note=""):
    return Preset(name, "gpt2", {"L": L, "h": h, "d": d, "V": 50257, "T_max": 1024}, {}, source, note)


def _gpt3(name, L, h, d, note="", waive=()):
    return Preset(name, "gpt2", {"L": L, "h": h, "d": d, "V": 50257, "T_max": 2048}, {},
                  "Brown et al. 2020, Table 2.1 (GPT-2 architecture, d_ff = 4d)", note, waive)


_GPT2_SRC = "Radford et al. 2019 (GPT-2); sizes of the released checkpoints"

_TABLE: tuple[Preset, ...] = (
    _gpt2("gpt2-small", 12, 12, 768, _GPT2_SRC,
          "the paper's Table 2 says 117M; the released checkpoint has 124,439,808"),
    _gpt2("gpt2-medium", 24, 16, 1024, _GPT2_SRC, "the paper's Table 2 says 345M"),
    _gpt2("gpt2-large", 36, 20, 1280, _GPT2_SRC, "the paper's Table 2 says 762M"),
    _gpt2("gpt2-xl", 48, 25, 1600, _GPT2_SRC, "the paper's Table 2 says 1542M"),
    _gpt3("gpt3-125m", 12, 12, 768),
    _gpt3("gpt3-350m", 24, 16, 1024),
    _gpt3("gpt3-1.3b", 24, 24, 2048,
          "Table 2.1 lists 24 heads of 128 (24 x 128 = 3072 != d_model 2048); "
          "this preset keeps d = 2048 and 24 heads (as scaling tables list it), so d_head = 2048/24 is not "
          "an integer: set h=16 (heads of 128) for a consistent model",
          waive=("d must be divisible by h",)),
    _gpt3("gpt3-6.7b", 32, 32, 4096),
    _gpt3("gpt3-13b", 40, 40, 5120,
          "Table 2.1 prints d_model 5140, which 40 heads do not divide; its Table D.1 count "
          "matches 5120, used here"),
    _gpt3("gpt3-175b", 96, 96, 12288),
)

#: every preset: GPT-2's and GPT-3's above, then the decoder families' (``presets_decoder``), the
#: recent decoders' (``presets_recent``), the encoders', encoder--decoders' and ViT's (``presets_encdec``)
PRESETS: dict[str, Preset] = {p.name: p for p in (*_TABLE, *DECODER_ROWS, *RECENT_ROWS, *ENCDEC_ROWS)}
if len(PRESETS) != len(_TABLE) + len(DECODER_ROWS) + len(RECENT_ROWS) + len(ENCDEC_ROWS):
    raise SymgptError("duplicate preset name in the preset table")


def register_preset(preset: Preset) -> Preset:
    """Add a preset of your own; a duplicate name raises."""
    if preset.name in PRESETS:
        raise SymgptError(f"preset {preset.name!r} is defined twice")
    PRESETS[preset.name] = preset
    return preset


def suggestions(name: str, names) -> list[str]:
    """The names a typo most likely meant: spelled alike once case, ``_``, ``-``, ``.`` and
    spaces are ignored (``gpt2_small``, ``GPT-2``), then by similarity (``llama2-7b``)."""
    import difflib

    def key(s: str) -> str:
        return "".join(ch for ch in s.lower() if ch.isalnum())

    names = list(names)
    k = key(name)
    same = [n for n in names if key(n) == k]
    if same:
        return same
    keys = {key(n): n for n in names}
    close = [keys[c] for c in difflib.get_close_matches(k, list(keys), n=3, cutoff=0.75)]
    return close or [n for n in names if k and (k in key(n) or key(n) in k)][:3]


def preset(name: str, families=()) -> Preset:
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        if not isinstance(name, str):
            raise SymgptError(f"a model name is text, got {type(name).__name__}") from None
        close = suggestions(name, [*PRESETS, *families])
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        shown = repr(name if len(name) <= 60 else name[:57] + "...")
        raise SymgptError(
            f"unknown model {shown}{hint}; run 'symgpt models' for the presets, or give a path to a config.json"
        ) from None
