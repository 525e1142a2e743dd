// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// Helpers that give float results exactly or correctly rounded by integer arithmetic on the bit
// patterns, so that no driver latitude (division precision, contraction, subnormal flushing) shows:
// fmod_, div_rn_ and what they use. Written once for both float widths: the layout tokens (UT, MANT,
// MANT_MASK, MANTI, HIDDEN, INF_BITS, ABS_MASK, SIGN_BIT, EMAX, BIAS, STEP) are replaced per width by
// kernels/exact_float_math.cpp.

// |x| (as bits) = m 2^(e - BIAS - MANT), m with its hidden bit; subnormals have e = 1, no hidden bit.
struct Parts_ { m: UT, e: i32 }
fn parts_(a: UT) -> Parts_ {
  let e = i32(u32(a >> MANT));
  if (e == 0) { return Parts_(a, 1); }
  return Parts_((a & MANT_MASK) | HIDDEN, e);
}

// The float of sign | m 2^(e - BIAS - MANT) for m < 2 HIDDEN, exact (no rounding happens).
fn pack_exact_(sign: UT, m: UT, e: i32) -> T {
  var r = m;
  var k = e;
  while (r != UT(0) && r < HIDDEN && k > 1) {
    r = r << 1u;
    k = k - 1;
  }
  if (r < HIDDEN) { return bitcast<T>(sign | r); }
  return bitcast<T>(sign | (UT(u32(k)) << MANT) | (r & MANT_MASK));
}

// sign | q 2^(e - BIAS - MANT - 1) rounded to nearest even, q of MANT + 2 bits (the last a guard bit),
// `sticky` when nonzero bits lie beyond q; overflow gives infinity, underflow subnormals or zero.
// At e = 1, q may lack its top bit (a subnormal result of shrink_), which packs as the subnormal m.
fn round_pack_(sign: UT, q: UT, e: i32, sticky: bool) -> T {
  if (e >= EMAX) { return bitcast<T>(sign | INF_BITS); }
  var m = q >> 1u;
  var lost = q & UT(1);
  var half = UT(1);
  var k = e;
  if (e < 1) {
    let sh = 2 - e;
    if (sh > MANTI + 3) { return bitcast<T>(sign); }
    m = q >> u32(sh);
    lost = q & ((UT(1) << u32(sh)) - UT(1));
    half = UT(1) << u32(sh - 1);
    k = 0;
  }
  if (lost > half || (lost == half && (sticky || (m & UT(1)) != UT(0)))) { m = m + UT(1); }
  if (k == 0 || m < HIDDEN) { return bitcast<T>(sign | m); }
  if (m >= (HIDDEN << 1u)) {
    m = m >> 1u;
    k = k + 1;
    if (k >= EMAX) { return bitcast<T>(sign | INF_BITS); }
  }
  return bitcast<T>(sign | (UT(u32(k)) << MANT) | (m & MANT_MASK));
}

// Zero and negative tests from the bits: a driver that flushes subnormals compares them equal to 0.
fn is_zero_(x: T) -> bool { return (bitcast<UT>(x) & ABS_MASK) == UT(0); }

fn is_neg_(x: T) -> bool { return (bitcast<UT>(x) & SIGN_BIT) != UT(0) && !is_zero_(x); }

// Float order from the bits: a driver that flushes subnormals compares them equal to zero and to one
// another (1e-45 < 3e-45 was false, so eq, clamp and maximum were wrong). +0 and -0 share a key;
// with NaN, every order test is false as in IEEE.
fn fkey_(x: T) -> UT {
  let u = bitcast<UT>(x);
  if ((u & ABS_MASK) == UT(0)) { return SIGN_BIT; }
  if ((u & SIGN_BIT) != UT(0)) { return ~u; }
  return u | SIGN_BIT;
}

fn flt_(x: T, y: T) -> bool { return !isnan_(x) && !isnan_(y) && fkey_(x) < fkey_(y); }

fn fle_(x: T, y: T) -> bool { return !isnan_(x) && !isnan_(y) && fkey_(x) <= fkey_(y); }

fn feq_(x: T, y: T) -> bool { return !isnan_(x) && !isnan_(y) && fkey_(x) == fkey_(y); }

// generic.wgsl's maximum_, minimum_, fmax_, fmin_ and clamp_ on flt_ (the same NaN rules and the
// same operand kept when they compare equal).
fn fmaximum_(x: T, y: T) -> T {
  if (isnan_(x)) { return x; }
  if (isnan_(y)) { return y; }
  return select(y, x, flt_(y, x));
}

fn fminimum_(x: T, y: T) -> T {
  if (isnan_(x)) { return x; }
  if (isnan_(y)) { return y; }
  return select(y, x, flt_(x, y));
}

fn ffmax_(x: T, y: T) -> T {
  if (isnan_(x)) { return y; }
  if (isnan_(y)) { return x; }
  return select(y, x, flt_(y, x));
}

fn ffmin_(x: T, y: T) -> T {
  if (isnan_(x)) { return y; }
  if (isnan_(y)) { return x; }
  return select(y, x, flt_(x, y));
}

fn fclamp_(x: T, lo: T, hi: T) -> T {
  return fminimum_(fmaximum_(x, lo), hi);
}

fn is_subnormal_(x: T) -> bool {
  let a = bitcast<UT>(x) & ABS_MASK;
  return a != UT(0) && a < HIDDEN;
}

// sign, abs and neg of floats from the bits: a driver that flushes subnormals reads a subnormal as
// zero (sign 0 where the CPU gives 1) and may flush one passed through an arithmetic instruction.
fn fsign_(x: T) -> T {
  let a = bitcast<UT>(x) & ABS_MASK;
  if (a == UT(0) || a > INF_BITS) { return T(0); }
  return bitcast<T>(bitcast<UT>(T(1)) | (bitcast<UT>(x) & SIGN_BIT));
}

// floor, ceil and frac of a subnormal from the bits (a driver that flushes it reads 0, so floor(-1e-45)
// was -0, not -1); the builtins are exact on everything else. The sign is or'ed in last: lavapipe
// compiled select(0.0, -1.0, c), integer bits or not, as -float(c) and returned -0 for +0.
fn ffloor_(x: T) -> T {
  let a = bitcast<UT>(x) & ABS_MASK;
  if (a == UT(0) || a >= HIDDEN) { return floor(x); }
  let sign = bitcast<UT>(x) & SIGN_BIT;
  return bitcast<T>(sign | select(UT(0), bitcast<UT>(T(1)), sign != UT(0)));
}

fn fceil_(x: T) -> T {
  let a = bitcast<UT>(x) & ABS_MASK;
  if (a == UT(0) || a >= HIDDEN) { return ceil(x); }
  let sign = bitcast<UT>(x) & SIGN_BIT;
  return bitcast<T>(sign | select(bitcast<UT>(T(1)), UT(0), sign != UT(0)));
}

fn ffrac_(x: T) -> T {
  let a = bitcast<UT>(x) & ABS_MASK;
  if (a == UT(0) || a >= HIDDEN) { return x - trunc(x); }
  return x;
}

fn fabs_(x: T) -> T { return bitcast<T>(bitcast<UT>(x) & ABS_MASK); }

fn fneg_(x: T) -> T { return bitcast<T>(bitcast<UT>(x) ^ SIGN_BIT); }

// C's fmod, exact: the integer remainder of the significands, shifted STEP bits at a time (each
// step's dividend stays below the unsigned width). WGSL's x % y is x - y * trunc(x / y), which
// loses the quotient's bits and depends on the division's precision.
fn fmod_(x: T, y: T) -> T {
  let ax = bitcast<UT>(x) & ABS_MASK;
  let ay = bitcast<UT>(y) & ABS_MASK;
  if (ax >= INF_BITS || ay > INF_BITS || ay == UT(0)) { return nan_(); }
  if (ay == INF_BITS || ax < ay) { return x; }
  let px = parts_(ax);
  let py = parts_(ay);
  var r = px.m % py.m;
  var gap = px.e - py.e;
  while (gap > 0) {
    let s = min(gap, STEP);
    r = (r << u32(s)) % py.m;
    gap = gap - s;
  }
  return pack_exact_(bitcast<UT>(x) & SIGN_BIT, r, py.e);
}

// a / b correctly rounded (IEEE), by long division of the significands: WGSL allows 2.5 ulp for
// x / y and NVIDIA uses that latitude, while floor division must match the CPU to the bit.
fn div_rn_(a: T, b: T) -> T {
  let ua = bitcast<UT>(a);
  let ub = bitcast<UT>(b);
  let aa = ua & ABS_MASK;
  let ab = ub & ABS_MASK;
  let sign = (ua ^ ub) & SIGN_BIT;
  if (aa > INF_BITS || ab > INF_BITS || (aa == ab && (aa == UT(0) || aa == INF_BITS))) { return nan_(); }
  if (aa == INF_BITS || ab == UT(0)) { return bitcast<T>(sign | INF_BITS); }
  if (aa == UT(0) || ab == INF_BITS) { return bitcast<T>(sign); }
  var pa = parts_(aa);
  var pb = parts_(ab);
  while (pa.m < HIDDEN) {
    pa.m = pa.m << 1u;
    pa.e = pa.e - 1;
  }
  while (pb.m < HIDDEN) {
    pb.m = pb.m << 1u;
    pb.e = pb.e - 1;
  }
  var e = pa.e - pb.e + BIAS;
  var r = pa.m;
  if (r < pb.m) {
    r = r << 1u;
    e = e - 1;
  }
  var q = UT(0);
  for (var i = 0; i < MANTI + 2; i++) {
    q = q << 1u;
    if (r >= pb.m) {
      r = r - pb.m;
      q = q | UT(1);
    }
    r = r << 1u;
  }
  return round_pack_(sign, q, e, r != UT(0));
}

// sign(x) (|x| - |y|) correctly rounded, for finite x and y with |y| <= |x|: x - y when their signs
// agree, x + y when they differ (remainder's m + y, floor division's a - fmod(a, b)). From the bits,
// since a driver that flushes subnormals reads a subnormal operand as zero and returns a subnormal
// difference as zero. The difference is taken with three bits below y's last kept one, and one less
// when y has bits further down (`sticky`): those make it a little smaller than wide - kept.
fn shrink_(x: T, y: T) -> T {
  let ux = bitcast<UT>(x);
  let big = ux & ABS_MASK;
  let small = bitcast<UT>(y) & ABS_MASK;
  if (small == UT(0)) { return x; }
  if (big == small) { return bitcast<T>(UT(0)); }
  let pb = parts_(big);
  let ps = parts_(small);
  let d = pb.e - ps.e;
  // |y| below a quarter of x's ulp: the difference rounds back to x.
  if (d > MANTI + 3) { return x; }
  let wide = pb.m << 3u;
  let sub = ps.m << 3u;
  let kept = sub >> u32(d);
  let sticky = (kept << u32(d)) != sub;
  var q = wide - kept - select(UT(0), UT(1), sticky);
  var e = pb.e;
  while (q < (HIDDEN << 3u) && e > 1) {
    q = q << 1u;
    e = e - 1;
  }
  return round_pack_(ux & SIGN_BIT, q >> 2u, e, sticky || (q & UT(3)) != UT(0));
}

// log2 and log with a positive subnormal x scaled to a normal one from the bits first: lavapipe's
// float32 builtins were up to 15% off on subnormals (log2(1e-45) gave -127, not -149) and a driver
// that flushes them reads -inf; a negative subnormal gives NaN as on the CPU. Everything else goes
// to the builtin unchanged.
fn log2_sub_(x: T) -> T {
  let u = bitcast<UT>(x);
  var a = u & ABS_MASK;
  if (a == UT(0) || a >= HIDDEN) { return log2(x); }
  if (u != a) { return nan_(); }
  var k = 0;
  while (a < HIDDEN) {
    a = a << 1u;
    k = k + 1;
  }
  return log2(bitcast<T>(a)) - T(k);
}

fn log_sub_(x: T) -> T {
  let u = bitcast<UT>(x);
  var a = u & ABS_MASK;
  if (a == UT(0) || a >= HIDDEN) { return log(x); }
  if (u != a) { return nan_(); }
  var k = 0;
  while (a < HIDDEN) {
    a = a << 1u;
    k = k + 1;
  }
  return log(bitcast<T>(a)) - T(k) * T(0.6931471805599453);
}
