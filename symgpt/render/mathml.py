"""Presentation MathML of a closed form, byte for byte as SymPy 1.14 prints it, several times faster.

``presentation(expr)`` equals ``sympy.printing.mathml.mathml(expr, printer="presentation",
order="grlex", mul_symbol="dot")``. SymPy builds a DOM tree and, for every sum, orders its terms
through ``Expr.as_ordered_terms`` (complex coefficients, evalf); here the same markup is written
as strings, for the nodes symgpt's expressions are made of: integers and rationals, symbols,
sums, products, powers with rational exponents, max/min, floor/ceiling. Anything else (a float,
a function, a non-commutative symbol, a subclass) is handed to SymPy's printer whole, so this
can only be slower, never different; ``tests/test_mathml.py`` holds the two to equal strings.

What SymPy does, and how it is reproduced:

* a sum's terms in graded lexicographic order (``order="grlex"``): each term is a coefficient
  times a monomial over the generators (``decompose_power``: ``x**-2`` is ``x`` to the ``-2``,
  ``x**(3/2)`` is ``sqrt(x)`` cubed, anything else is itself to the 1st), the generators sorted
  by SymPy's default sort key; a term with a higher total degree comes first, then the
  lexicographically larger exponent vector. Two terms of one sum never share a monomial (SymPy
  would have combined them), so the coefficient never decides; if they did, SymPy prints it;
* a product: a negative coefficient becomes a leading ``-``; ``sympy.simplify.fraction`` splits
  it into numerator and denominator (``mfrac``) when a factor has a negative exponent or the
  coefficient is not an integer; the factors are sorted by SymPy's sort key, joined by ``·``, a
  sum among them in parentheses;
* a term of a sum that "could extract a minus sign" (a negative number or a product with a
  negative coefficient) is written ``- (its negation)``.
"""

from __future__ import annotations

from fractions import Fraction

import sympy
from sympy import Add, Integer, Max, Min, Mul, Pow, Rational, Symbol, ceiling, floor
from sympy.core.sorting import default_sort_key

#: SymPy's settings this printer reproduces
SETTINGS = {"printer": "presentation", "order": "grlex", "mul_symbol": "dot"}
DOT = "<mo>&#xB7;</mo>"
#: precedence levels of sympy.printing.precedence (PRECEDENCE_TRADITIONAL)
_ADD, _MUL, _POW, _FUNC, _ATOM = 40, 50, 60, 70, 1000
_NUMBERS = frozenset(type(n) for n in (sympy.Integer(2), sympy.Rational(2, 3), sympy.S.Zero, sympy.S.One,
                                         sympy.S.NegativeOne, sympy.S.Half))
_VARIADIC = {Max: "max", Min: "min"}
_BRACKETS = {floor: ("\u230A", "\u230B"), ceiling: ("\u2308", "\u2309")}
#: factor types the monomial of a term may be built from (a Pow is checked further)
_FACTORS = frozenset({Symbol, Pow, Add, Max, Min, floor, ceiling})


class _Unsupported(Exception):
    """A node this printer does not reproduce: SymPy's printer prints the whole expression."""


def presentation(expr) -> str:
    """The presentation MathML of *expr* (a SymPy expression), as SymPy's printer writes it."""
    try:
        text = _p(expr)
    except _Unsupported:
        return sympy_presentation(expr)
    return text if text.isascii() else text.encode("ascii", "xmlcharrefreplace").decode()


def sympy_presentation(expr) -> str:
    """SymPy's own printer with the same settings: the fallback, and the tests' oracle."""
    from sympy.printing.mathml import mathml

    return mathml(expr, **SETTINGS)


def _p(e) -> str:
    t = type(e)
    if t is Symbol:
        return _symbol(e)
    if t in _NUMBERS:
        return _rational(e.p, e.q)
    if t is Add:
        return _add(e)
    if t is Mul:
        c, facs = _split(e)
        if c.p < 0:
            return "<mrow><mo>-</mo>" + _multiply(-c, facs) + "</mrow>"
        return "<mrow>" + _multiply(c, facs) + "</mrow>"
    if t is Pow:
        return _pow(e.base, e.exp)
    if t in _VARIADIC:
        args = sorted(e.args, key=_sort_key)
        return (f"<mrow><mo>{_VARIADIC[t]}</mo><mrow><mo>(</mo>" + "<mo>,</mo>".join(_p(a) for a in args)
                + "<mo>)</mo></mrow></mrow>")
    if t in _BRACKETS:
        left, right = _BRACKETS[t]
        return f"<mrow><mo>{left}</mo>{_p(e.args[0])}<mo>{right}</mo></mrow>"
    raise _Unsupported(t.__name__)


# --- leaves ---------------------------------------------------------------------------------------
def _rational(p: int, q: int) -> str:
    if q == 1:
        return f"<mn>{p}</mn>"
    frac = f"<mfrac><mn>{abs(p)}</mn><mn>{q}</mn></mfrac>"
    return f"<mrow><mo>-</mo>{frac}</mrow>" if p < 0 else frac


_SYMBOLS: dict = {}


def _symbol(s) -> str:
    """``_print_Symbol``: ``T_max`` is T with the subscript max, ``x2`` is x sub 2, Greek names
    become their letters (SymPy's ``split_super_sub`` and ``greek_unicode``)."""
    text = _SYMBOLS.get(s)
    if text is None:
        if not s.is_commutative:
            raise _Unsupported("non-commutative symbol")
        from sympy.printing.conventions import split_super_sub
        from sympy.printing.pretty.pretty_symbology import greek_unicode

        def tr(x):
            return greek_unicode.get(x) if x in greek_unicode else x

        def join(items):
            if len(items) > 1:
                return "<mrow>" + "<mo> </mo>".join(f"<mi>{tr(i)}</mi>" for i in items) + "</mrow>"
            return f"<mi>{tr(items[0])}</mi>"

        name, supers, subs = split_super_sub(s.name)
        text = f"<mi>{tr(name)}</mi>"
        if supers and subs:
            text = f"<msubsup>{text}{join(subs)}{join(supers)}</msubsup>"
        elif supers:
            text = f"<msup>{text}{join(supers)}</msup>"
        elif subs:
            text = f"<msub>{text}{join(subs)}</msub>"
        if len(_SYMBOLS) > 4096:
            _SYMBOLS.clear()
        _SYMBOLS[s] = text
    return text


# --- sort keys ------------------------------------------------------------------------------------
_KEYS: dict = {}


def _sort_key(e):
    """SymPy's ``default_sort_key``, remembered (it is pure, and an Add's is costly)."""
    k = _KEYS.get(e)
    if k is None:
        if len(_KEYS) > 4096:
            _KEYS.clear()
        k = _KEYS[e] = default_sort_key(e)
    return k


def _symbolic(e) -> bool:
    """Whether *e* is a symbol or a power of one: SymPy's sort key then starts with Symbol's
    class key and the symbol's name, before every other factor's (a sum's, a power of a sum's,
    a max's or a floor's class key is larger), so the name alone orders it among them."""
    return type(e) is Symbol or (type(e) is Pow and type(e.base) is Symbol)


def _factor_key(f):
    """A key that sorts the factors of one product as ``Mul.as_ordered_factors`` does (no two
    factors of one product are powers of the same symbol)."""
    if type(f) is Symbol:
        return (0, f.name)
    if type(f) is Pow and type(f.base) is Symbol:
        return (0, f.base.name)
    return (1, _sort_key(f))


def _gen_key(g):
    """``default_sort_key`` order of generators: a symbol, then its rational powers by exponent
    (``sqrt(x)`` before ``x``), before anything else."""
    if type(g) is Symbol:
        return (0, g.name, Fraction(1))
    if type(g) is Pow and type(g.base) is Symbol:
        return (0, g.base.name, Fraction(g.exp.p, g.exp.q))
    return (1, _sort_key(g))


def _symbol_first(g):
    """``_gen_key`` where at most one generator is not symbolic: it sorts last, whatever its key."""
    return _gen_key(g) if _symbolic(g) else (1,)


# --- sums -----------------------------------------------------------------------------------------
def _add(e) -> str:
    out = ["<mrow>"]
    for i, t in enumerate(_grlex(e.args)):
        if i == 0:
            out.append(_p(t))
        elif type(t) in _NUMBERS and t.p < 0:
            out.append("<mo>-</mo>" + _rational(-t.p, t.q))
        elif type(t) is Mul and type(t.args[0]) in _NUMBERS and t.args[0].p < 0:
            c, facs = _split(t)
            out.append("<mo>-</mo>" + _mul_text(-c, facs))
        else:
            out.append("<mo>+</mo>" + _p(t))
    out.append("</mrow>")
    return "".join(out)


def _grlex(terms) -> list:
    """``Expr.as_ordered_terms(order="grlex")`` for the terms of one sum."""
    monomials, gens = [], set()
    for t in terms:
        m = {}
        if type(t) not in _NUMBERS:
            facs = (t.args[1:] if type(t.args[0]) in _NUMBERS else t.args) if type(t) is Mul else (t,)
            for f in facs:
                if type(f) not in _FACTORS:
                    raise _Unsupported(type(f).__name__)
                if type(f) is Pow:
                    b, x = f.base, f.exp
                    if type(x) not in _NUMBERS or type(b) in _NUMBERS:
                        raise _Unsupported("power")
                    if x.q != 1:
                        b = Pow(b, Rational(1, x.q))
                    m[b] = x.p
                else:
                    m[f] = 1
                if not _symbolic(f) and f.is_number:  # as_terms folds a constant factor into the coefficient
                    raise _Unsupported("constant factor")
        monomials.append(m)
        gens.update(m)
    # a sum's or a max's sort key is costly the first time: taken only when two must be compared
    order = sorted(gens, key=_gen_key if sum(not _symbolic(g) for g in gens) > 1 else _symbol_first)
    keys = []
    for m in monomials:
        v = tuple(-m.get(g, 0) for g in order)
        keys.append((sum(v), v))
    if len(set(keys)) < len(keys):
        raise _Unsupported("two terms with one monomial")
    return [t for _, t in sorted(zip(keys, terms), key=lambda kt: kt[0])]


# --- products -------------------------------------------------------------------------------------
def _split(e):
    """A product's coefficient (a Rational, 1 if none) and its other factors."""
    first = e.args[0]
    if type(first) in _NUMBERS:
        return first, e.args[1:]
    return sympy.S.One, e.args


def _mul_text(c, facs) -> str:
    """The product ``c * facs`` (c > 0) as SymPy builds and prints it: one factor alone is itself."""
    if c == 1 and len(facs) == 1:
        return _p(facs[0])
    return "<mrow>" + _multiply(c, facs) + "</mrow>"


def _multiply(c, facs) -> str:
    """The inside of ``_print_Mul``'s row for the product ``c * facs`` with c > 0."""
    numer, denom = [], []  # factors; a power with a negated exponent is a (base, exponent) pair
    if c.q != 1:
        if c.p != 1:
            numer.append(Integer(c.p))
        denom.append(Integer(c.q))
    elif c != 1:
        numer.append(c)
    for f in facs:
        if type(f) is Pow:
            x = f.exp
            if type(x) not in _NUMBERS or type(f.base) in _NUMBERS:
                raise _Unsupported("power")
            if x.p < 0:
                denom.append(f.base if x == -1 else (f.base, -x))
            else:
                numer.append(f)
        else:
            numer.append(f)
    if denom:
        return f"<mfrac>{_product(numer)}{_product(denom)}</mfrac>"
    if c == 1 and len(facs) == 1:
        return _p(facs[0])
    body = DOT.join(_paren(f, _MUL) for f in sorted(facs, key=_factor_key))
    return body if c == 1 else f"{_p(c)}{DOT}{body}"


def _product(items) -> str:
    """``Mul(*items)`` (evaluated, as ``fraction`` returns it) printed."""
    if not items:
        return "<mn>1</mn>"
    if len(items) == 1:
        return _item(items[0])
    if len(items) == 2 and any(type(i) is Add for i in items):
        # a number times a sum is distributed by Mul; let SymPy build it
        return _p(Mul(*(Pow(*i) if type(i) is tuple else i for i in items)))
    coeff = [i for i in items if type(i) in _NUMBERS]
    facs = [i for i in items if type(i) not in _NUMBERS]
    body = DOT.join(_paren(f, _MUL) for f in sorted(facs, key=_item_key))
    return "<mrow>" + (f"{_p(coeff[0])}{DOT}{body}" if coeff else body) + "</mrow>"


def _item(i) -> str:
    return _pow(*i) if type(i) is tuple else _p(i)


def _item_key(i):
    if type(i) is tuple:
        b, x = i
        return (0, b.name) if type(b) is Symbol else (1, _sort_key(Pow(b, x)))
    return _factor_key(i)


# --- powers ---------------------------------------------------------------------------------------
def _pow(b, x) -> str:
    if type(x) not in _NUMBERS or type(b) in _NUMBERS:
        raise _Unsupported("power")
    p, q = x.p, x.q
    if q != 1 and abs(p) == 1:
        root = f"<msqrt>{_p(b)}</msqrt>" if q == 2 else f"<mroot>{_p(b)}<mn>{q}</mn></mroot>"
        return f"<mfrac><mn>1</mn>{root}</mfrac>" if p == -1 else root
    if q != 1:
        sup = f"<msup>{_paren(b, _POW)}<mfrac><mn>{abs(p)}</mn><mn>{q}</mn></mfrac></msup>"
        return f"<mfrac><mn>1</mn>{sup}</mfrac>" if p < 0 else sup
    if p < 0:
        if p == -1:
            return f"<mfrac><mn>1</mn>{_p(b)}</mfrac>"
        return f"<mfrac><mn>1</mn><msup>{_paren(b, _POW)}<mn>{-p}</mn></msup></mfrac>"
    return f"<msup>{_paren(b, _POW)}<mn>{p}</mn></msup>"


def _paren(e, level: int) -> str:
    """``parenthesize(e, level)``: in parentheses when its precedence is at most *level*."""
    if type(e) is tuple:  # a power
        return _pow(*e) if _POW > level else f"<mrow><mo>(</mo>{_pow(*e)}<mo>)</mo></mrow>"
    if _precedence(e) <= level:
        return f"<mrow><mo>(</mo>{_p(e)}<mo>)</mo></mrow>"
    return _p(e)


def _precedence(e) -> int:
    """``precedence_traditional`` for the nodes printed here."""
    t = type(e)
    if t in _NUMBERS:
        return _ADD if e.p < 0 else (_ATOM if e.q == 1 else _MUL)
    return {Add: _ADD, Mul: _MUL, Pow: _POW, floor: _FUNC, ceiling: _FUNC}.get(t, _ATOM)
