"""symgpt latex MODEL: LaTeX tables, derivations and figures for lecture notes."""

from __future__ import annotations

from . import choices
from .common import add_model, emit, load_model, wrote

HELP = "LaTeX tables, derivations and figures of a model, in your notation"
DESCRIPTION = (
    "Print (or write with -o) LaTeX for a model: per-block and embedding parameter tables, the "
    "total as an align* derivation, the rule-of-thumb cross-check, FLOPs, the training-memory "
    "table, full fine-tuning against LoRA and QLoRA, the shape trace, the parameter breakdown with its stacked bar, and the self-test "
    "answers. Fragments are meant for \\input (they need the packages of 'symgpt latex --preamble'); "
    "--standalone gives a complete article that compiles with pdflatex."
)


def add_arguments(p):
    add_model(p, optional=True)  # 'symgpt latex --preamble' needs none
    p.add_argument("--what", action="append", metavar="PART", choices=choices.LATEX_PARTS,
                   help=f"what to typeset (repeatable; default: all): {choices.listed(choices.LATEX_PARTS)}")
    p.add_argument("--notation", metavar="NAME|FILE", default=None,
                   help=f"notation profile: {choices.listed(choices.NOTATIONS)}, or a profile file "
                   "(JSON or 'symbol = latex' lines)")
    p.add_argument("--numbers", choices=choices.NUMBER_STYLES, default="sci",
                   help="how FLOP counts print: 1.772 \\times 10^{10} (sci), 17{,}716{,}740{,}096 (exact), "
                   "17.72\\,\\mathrm{B} (short); parameter counts are always exact")
    p.add_argument("--digits", type=int, default=4, metavar="N", help="significant digits of rounded numbers (default 4)")
    p.add_argument("--convention", default=None, metavar="NAME",
                   help=f"FLOP counting convention: {choices.listed(choices.CONVENTIONS)}")
    p.add_argument("--standalone", action="store_true", help="a complete document instead of fragments")
    p.add_argument("--preamble", action="store_true", help="print the packages the fragments need and exit")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout")


def run(args) -> int:
    from pathlib import Path

    from ..core.io import write_atomic
    from ..core.notation import notation
    from ..documents.latex_doc import document, fragment, preamble
    from ..documents.report import report_model

    if args.preamble:
        text = preamble()
    elif args.model is None:
        from ..core.errors import SymgptError

        raise SymgptError("the following arguments are required: MODEL (only --preamble needs none)")
    else:
        m = load_model(args)
        nota = notation(args.notation)
        what = args.what or ["all"]
        if "T_max" in m.sizes or "T" in m.sizes:
            m = report_model(m)
        if not 1 <= args.digits <= 12:
            from ..core.errors import SymgptError

            raise SymgptError(f"--digits must be 1..12, got {args.digits}")
        opts = {"flops": {"numbers": args.numbers, "digits": args.digits, "convention": args.convention}}
        if args.standalone:
            text = document(m, what, nota, **opts)
        else:
            text = fragment(m, what, nota, **opts)
    if args.output:
        write_atomic(Path(args.output), text)
        wrote(args.output)
    else:
        emit(text)
    return 0

