// Exact arithmetic for symgpt's page: rationals of two BigInts, and how they are printed.
// The compiled closed forms (const E below) call Q, A, M, P, C, F, N, X; nothing here rounds
// except the approximations printed beside the exact values (sci, dec, pct).
"use strict";
const gcd = (a, b) => { if (a < 0n) a = -a; if (b < 0n) b = -b; while (b) { const t = a % b; a = b; b = t; } return a; };
function Q(n, d = 1n) {
  if (d === 0n) throw new RangeError("division by zero");
  if (d < 0n) { n = -n; d = -d; }
  const g = gcd(n, d);
  return g > 1n ? { n: n / g, d: d / g } : { n, d };
}
function A(...x) { let n = 0n, d = 1n; for (const y of x) { if (y.d === d) n += y.n; else { n = n * y.d + y.n * d; d *= y.d; } } return Q(n, d); }
function M(...x) { let n = 1n, d = 1n; for (const y of x) { n *= y.n; d *= y.d; } return Q(n, d); }
function P(b, e) { if (e < 0) { b = Q(b.d, b.n); e = -e; } return Q(b.n ** BigInt(e), b.d ** BigInt(e)); }
function F(x) { let q = x.n / x.d; if (x.n < 0n && q * x.d !== x.n) q -= 1n; return Q(q); }
function C(x) { let q = x.n / x.d; if (x.n > 0n && q * x.d !== x.n) q += 1n; return Q(q); }
const cmp = (a, b) => { const l = a.n * b.d, r = b.n * a.d; return l < r ? -1 : l > r ? 1 : 0; };
const N = (...x) => x.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
const X = (...x) => x.reduce((a, b) => (cmp(b, a) > 0 ? b : a));

// --- printing ---------------------------------------------------------------------------------
const commas = (n) => { const neg = n < 0n; const s = (neg ? -n : n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); return (neg ? "-" : "") + s; };
/** 124,439,808 or 250,566,144/7: the digits the command line prints */
const exactText = (r) => (r.d === 1n ? commas(r.n) : commas(r.n) + "/" + commas(r.d));
/** 124439808 or 250566144/7: the data-value attribute */
const rawText = (r) => (r.d === 1n ? String(r.n) : r.n + "/" + r.d);
const toFloat = (r) => Number(r.n) / Number(r.d);
const SUP = { 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹", "-": "⁻" };
const TEN = (e) => 10n ** BigInt(e);
/** [m, e]: r > 0 rounded (half up) to sig digits, r ≈ m · 10^(e - sig + 1), 10^(sig-1) <= m < 10^sig */
function digitsOf(r, sig) {
  const atLeast = (e) => (e >= 0 ? r.n >= r.d * TEN(e) : r.n * TEN(-e) >= r.d);
  let e = r.n.toString().length - r.d.toString().length;
  while (!atLeast(e)) e--;
  while (atLeast(e + 1)) e++;
  const s = sig - 1 - e;
  const num = s >= 0 ? r.n * TEN(s) : r.n, den = s >= 0 ? r.d : r.d * TEN(-s);
  let m = (2n * num + den) / (2n * den);
  if (m >= TEN(sig)) { m /= 10n; e += 1; }
  return [m, e];
}
const abs = (r) => (r.n < 0n ? Q(-r.n, r.d) : r);
/** 1.764 × 10¹⁶ */
function sci(r, sig = 4) {
  if (r.n === 0n) return "0";
  const [m, e] = digitsOf(abs(r), sig), s = m.toString();
  return (r.n < 0n ? "-" : "") + s[0] + (sig > 1 ? "." + s.slice(1) : "") + " × 10" + String(e).replace(/./g, (c) => SUP[c]);
}
/** a decimal with sig significant digits: 6.32, 0.0358, 1,230 */
function dec(r, sig = 3) {
  if (r.n === 0n) return "0";
  const [m, e] = digitsOf(abs(r), sig), s = m.toString(), sign = r.n < 0n ? "-" : "";
  if (e >= sig - 1) return sign + commas(m * TEN(e - sig + 1));
  if (e >= 0) return sign + s.slice(0, e + 1) + "." + s.slice(e + 1);
  return sign + "0." + "0".repeat(-e - 1) + s;
}
/** an exact share as a percentage with one decimal (half up) */
function pct(r) {
  if (r.n === 0n) return "0 %";
  const m = (2n * 1000n * r.n + r.d) / (2n * r.d);
  return m === 0n ? "<0.1 %" : `${m / 10n}.${m % 10n} %`;
}
/** a value in the unit a reader thinks in, rounded to 3 significant digits: bytes in kB .. PB
 *  (decimal), seconds in ns .. h, counts and rates as digits up to a million, then × 10ⁿ */
function humanText(unit, r) {
  const sign = r.n < 0n ? "-" : "", a = abs(r);
  const scaled = (steps) => {
    for (const [size, name] of steps) if (cmp(a, size) >= 0) return sign + dec(M(a, Q(size.d, size.n))) + " " + name;
    const [size, name] = steps[steps.length - 1];
    return sign + dec(M(a, Q(size.d, size.n))) + " " + name;
  };
  if (r.n === 0n) return "0" + (unit === "bytes" ? " B" : unit === "s" ? " s" : unit ? " " + unit : "");
  if (unit === "bytes") {
    if (cmp(a, Q(TEN(18))) >= 0) return sign + sci(M(a, Q(1n, TEN(15))), 3) + " PB";
    return scaled([[Q(TEN(15)), "PB"], [Q(TEN(12)), "TB"], [Q(TEN(9)), "GB"], [Q(TEN(6)), "MB"], [Q(TEN(3)), "kB"], [Q(1n), "B"]]);
  }
  if (unit === "s") {
    if (cmp(a, Q(3600n * 1000n)) >= 0) return sign + sci(M(a, Q(1n, 3600n)), 3) + " h";
    return scaled([[Q(3600n), "h"], [Q(60n), "min"], [Q(1n), "s"], [Q(1n, 1000n), "ms"], [Q(1n, TEN(6)), "µs"], [Q(1n, TEN(9)), "ns"]]);
  }
  const word = unit ? " " + unit : "";
  if (cmp(a, Q(TEN(6))) >= 0) return sign + sci(a, 3) + word;
  return sign + (a.d === 1n ? commas(a.n) : dec(a)) + word;
}
/** bytes in decimal GB (10⁹) and binary GiB (2³⁰), both labelled */
const bytesText = (r) => `${dec(M(r, Q(1n, TEN(9))))} GB = ${dec(M(r, Q(1n, 2n ** 30n)))} GiB`;
