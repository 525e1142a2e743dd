// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// Helpers written once for any computation type (ints included).

fn maximum_(x: T, y: T) -> T {
  if (isnan_(x)) { return x; }
  if (isnan_(y)) { return y; }
  return select(y, x, x > y);
}

fn minimum_(x: T, y: T) -> T {
  if (isnan_(x)) { return x; }
  if (isnan_(y)) { return y; }
  return select(y, x, x < y);
}

fn fmax_(x: T, y: T) -> T {
  if (isnan_(x)) { return y; }
  if (isnan_(y)) { return x; }
  return select(y, x, x > y);
}

fn fmin_(x: T, y: T) -> T {
  if (isnan_(x)) { return y; }
  if (isnan_(y)) { return x; }
  return select(y, x, x < y);
}

// clamp(x, lo, hi) with PyTorch's NaN rule: any NaN among the three gives NaN.
fn clamp_(x: T, lo: T, hi: T) -> T {
  return minimum_(maximum_(x, lo), hi);
}

fn sign_(x: T) -> T {
  return select(select(T(0), T(-1), x < T(0)), T(1), x > T(0));
}

// Truncated division and remainder of signed integers with nothing left to the driver: SPIR-V's
// OpSRem / OpSMod (what WGSL's `%` becomes) are undefined for negative operands without
// VK_KHR_maintenance8 (NVIDIA returns the remainder of the unsigned bit patterns), while OpSDiv
// is defined, so the remainder comes from the quotient. Division by zero gives -1 and a zero
// divisor's remainder is the dividend on every adapter (CUDA's answers; the CPU raises instead).
fn tdiv_(x: T, y: T) -> T {
  if (y == T(0)) { return T(-1); }
  if (y == T(-1)) { return -x; }
  return x / y;
}

fn trem_(x: T, y: T) -> T {
  if (y == T(0)) { return x; }
  if (y == T(-1)) { return T(0); }
  return x - y * (x / y);
}

// Python's modulo: the result takes the divisor's sign.
fn remainder_(x: T, y: T) -> T {
  var m = trem_(x, y);
  if (m != T(0) && ((y < T(0)) != (m < T(0)))) { m = m + y; }
  return m;
}

fn div_floor_int_(x: T, y: T) -> T {
  if (y == T(0)) { return T(-1); }
  var q = tdiv_(x, y);
  if ((trem_(x, y) != T(0)) && ((x < T(0)) != (y < T(0)))) { q = q - T(1); }
  return q;
}

// Integer powers by squaring; negative exponents give 0 except for bases 1 and -1 (PyTorch's rule).
fn pow_int_(x: T, y: T) -> T {
  if (y < T(0)) {
    if (x == T(1)) { return T(1); }
    if (x == T(-1)) { return select(T(1), T(-1), (y & T(1)) != T(0)); }
    return T(0);
  }
  var r = T(1);
  var b = x;
  var e = y;
  while (e != T(0)) {
    if ((e & T(1)) != T(0)) { r = r * b; }
    b = b * b;
    e = e >> 1u;
  }
  return r;
}

fn shl_(x: T, y: T) -> T {
  if (y < T(0) || y >= T(BITS)) { return T(0); }
  return x << u32(y);
}

fn shr_(x: T, y: T) -> T {
  if (y < T(0) || y >= T(BITS)) { return x >> u32(BITS - 1); }
  return x >> u32(y);
}

fn lerp_(x: T, y: T, w: T) -> T {
  return select(y - (y - x) * (T(1) - w), x + w * (y - x), abs(w) < T(0.5));
}
