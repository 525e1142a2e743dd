"""Computes the constants of the float64 math helpers, as WGSL items of the f64_builtins pool
(gen_wgsl_math.py embeds them with the pool of csrc/kernels/wgsl/math/f64_builtins.wgsl).

- The bits of 2/pi that sin/cos/tan's argument reduction multiplies by (Payne and Hanek's method):
  computed here with integer arithmetic (Machin's formula for pi), so the table needs no trust.
- ln 2 as a 96-bit fixed-point integer, for exp's argument reduction (also integer arithmetic:
  ln 2 = 2 atanh(1/3)).
- erfcx(x) = exp(x^2) erfc(x) on a few intervals as polynomials, from Chebyshev interpolation at
  400-bit precision (mpmath, which torch depends on through sympy); erfc_d multiplies it by
  exp(-x^2). The degree of each piece is the smallest whose dropped Chebyshev terms are below 2^-62
  of the function, so the polynomials are as exact as float64 can hold them.
"""

from __future__ import annotations

from pathlib import Path

BACKEND = Path(__file__).resolve().parent.parent

# Words of 2/pi kept: two zero words ahead of the binary point, so a window can start up to 64 bits
# before it (arguments near 1), and enough after it for the largest exponent plus a 192-bit window.
TWO_OVER_PI_WORDS = 42
TWO_OVER_PI_PAD = 2
# erfcx pieces: erf/erfc use the Taylor series of erf below 0.5 and a continued fraction beyond 4.
ERFCX_PIECES = ((0.5, 1.0), (1.0, 2.0), (2.0, 4.0))
# Fraction bits of ln 2 that exp_reduce_d multiplies by k (|k| <= 1075, so k times the rounding
# error stays below 2^-86).
LN2_BITS = 96


def two_over_pi_words(count: int = TWO_OVER_PI_WORDS, pad: int = TWO_OVER_PI_PAD) -> list[int]:
    bits = 32 * (count - pad)
    precision = bits + 64

    def arctan_inverse(x: int) -> int:  # arctan(1/x) * 2^precision
        term = (1 << precision) // x
        total, n, sign = term, 1, -1
        while term:
            term //= x * x
            total += sign * (term // (2 * n + 1))
            sign, n = -sign, n + 1
        return total

    pi = 4 * (4 * arctan_inverse(5) - arctan_inverse(239))
    fraction = ((2 << (2 * precision)) // pi) >> (precision - bits)
    return [0] * pad + [(fraction >> (32 * (count - pad - 1 - k))) & 0xFFFFFFFF for k in range(count - pad)]


def ln2_fixed(bits: int = LN2_BITS) -> int:
    """round(ln 2 * 2^bits), from 2 atanh(1/3) = 2 sum 3^-(2n+1) / (2n+1) with 64 guard bits."""
    precision = bits + 64
    total, n, power = 0, 0, 3
    while term := (1 << precision) // (power * (2 * n + 1)):
        total, n, power = total + term, n + 1, power * 9
    return (2 * total + (1 << 63)) >> 64


def erfcx_piece(low: float, high: float) -> tuple[float, float, list[float]]:
    """(centre, half width, monomial coefficients in s = (x - centre) / half width)."""
    import mpmath

    with mpmath.workprec(400):
        centre, half = mpmath.mpf(low + high) / 2, mpmath.mpf(high - low) / 2
        floor = mpmath.erfc(high) * mpmath.exp(mpmath.mpf(high) ** 2) * mpmath.mpf(2) ** -62
        for degree in range(8, 60):
            n = degree + 1
            nodes = [mpmath.cos(mpmath.pi * (k + mpmath.mpf(0.5)) / n) for k in range(n)]
            values = [mpmath.erfc(centre + half * s) * mpmath.exp((centre + half * s) ** 2) for s in nodes]
            cheb = [2 * mpmath.fsum(values[k] * mpmath.cos(mpmath.pi * j * (k + mpmath.mpf(0.5)) / n)
                                    for k in range(n)) / n for j in range(n)]
            cheb[0] /= 2
            if abs(cheb[-1]) < floor and abs(cheb[-2]) < floor:
                break
        # Chebyshev polynomials T_j as monomial coefficient lists, summed with their weights.
        basis = [[mpmath.mpf(1)], [mpmath.mpf(0), mpmath.mpf(1)]]
        while len(basis) < n:
            nxt = [mpmath.mpf(0)] * (len(basis) + 1)
            for i, v in enumerate(basis[-1]):
                nxt[i + 1] += 2 * v
            for i, v in enumerate(basis[-2]):
                nxt[i] -= v
            basis.append(nxt)
        mono = [mpmath.mpf(0)] * n
        for weight, poly in zip(cheb, basis):
            for i, v in enumerate(poly):
                mono[i] += weight * v
        return float(centre), float(half), [float(v) for v in mono]


def horner(variable: str, coefficients: list[float], indent: str) -> str:
    lines = [f"{indent}var p = f64({coefficients[-1]!r});\n"]
    lines += [f"{indent}p = f64({c!r}) + {variable} * p;\n" for c in reversed(coefficients[:-1])]
    return "".join(lines)


def render_erfcx() -> str:
    body = ["fn erfcx_poly_d(x: f64) -> f64 {\n"]
    for index, (low, high) in enumerate(ERFCX_PIECES):
        centre, half, mono = erfcx_piece(low, high)
        last = index == len(ERFCX_PIECES) - 1
        body.append("  {\n" if last else f"  if (x <= f64({high!r})) {{\n")
        body.append(f"    let s = (x - f64({centre!r})) * f64({1 / half!r});\n")
        body.append(horner("s", mono, "    "))
        body.append("    return p;\n  }\n")
    body.append("}\n")
    return "".join(body)


def render_table() -> str:
    words = two_over_pi_words()
    rows = [", ".join(f"0x{w:08x}u" for w in words[i:i + 6]) for i in range(0, len(words), 6)]
    return (f"var<private> TWO_OVER_PI_: array<u32, {len(words)}> = array<u32, {len(words)}>(\n  "
            + ",\n  ".join(rows) + ");\n")


def render_ln2() -> str:
    value = ln2_fixed()
    words = ", ".join(f"0x{(value >> shift) & 0xFFFFFFFF:08x}u" for shift in range(LN2_BITS - 32, -1, -32))
    return f"fn ln2_fixed_d() -> vec3<u32> {{\n  return vec3<u32>({words});\n}}\n"


def helpers() -> list[tuple[str, str]]:
    """(name, WGSL) of each generated helper: the 2/pi table trig_reduce_d indexes, erfcx_poly_d, and
    ln2_fixed_d (ln 2 times 2^96, most significant word first) for exp_reduce_d."""
    return [("TWO_OVER_PI_", render_table()), ("erfcx_poly_d", render_erfcx()), ("ln2_fixed_d", render_ln2())]
