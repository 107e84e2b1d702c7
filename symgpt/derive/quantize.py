"""Storage of a quantized frozen base (QLoRA), as closed forms with the block sizes named.

* ``nf4``: 4-bit NormalFloat weights in blocks of ``block`` (64) with one absmax per block,
  the absmax values double-quantized to 8 bits in blocks of ``block2`` (256) with one fp32
  second-level constant per block (Dettmers et al. 2023, Sec. 3; bitsandbytes' ``Params4bit``
  with ``compress_statistics=True``): 4 + 8/64 + 32/(64·256) bits per weight. Without double
  quantization each block keeps an fp32 absmax: 4 + 32/64 bits per weight.
* ``int8``: LLM.int8 (Dettmers et al. 2022; bitsandbytes' ``Int8Params``): one byte per weight
  and one fp32 scale per output row (``SCB``): 8 + 32/d_in bits per weight.

Blocks are taken whole (a tensor's element count a multiple of block·block2); bitsandbytes pads
the last block of a tensor that is not.
"""

from __future__ import annotations

import sympy

from ..core.errors import SymgptError

#: Dettmers et al. 2023: NF4 block size 64, the absmax values quantized in blocks of 256
NF4_BLOCK = 64
NF4_BLOCK2 = 256


def nf4_bits(block: int = NF4_BLOCK, block2: int | None = NF4_BLOCK2, bits: int = 4, scale_bits: int = 8,
             constant_bits: int = 32) -> sympy.Rational:
    """Bits per weight of NF4 with blocks of *block* and, when *block2* is given, the absmax
    values double-quantized to *scale_bits* in blocks of *block2* with one *constant_bits*
    constant each (without: one *constant_bits* absmax per block)."""
    b = sympy.Integer(block)
    if block2 is None:
        return bits + sympy.Integer(constant_bits) / b
    return bits + sympy.Integer(scale_bits) / b + sympy.Integer(constant_bits) / (b * block2)


def int8_bits(d_in) -> sympy.Expr:
    """Bits per weight of an LLM.int8 matrix with *d_in* inputs: 8 + one fp32 scale per row."""
    return 8 + sympy.Integer(32) / d_in


def storage_bits(base: str, shape) -> sympy.Expr:
    """Bits per element of a linear weight of *shape* (d_in, d_out) stored as *base*."""
    if base == "nf4":
        return nf4_bits()
    if base == "int8":
        return int8_bits(shape[0])
    raise SymgptError(f"unknown quantized base {base!r}")
