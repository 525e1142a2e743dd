// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// Embedded by backend/codegen/gen_wgsl_math.py.
//
// float32 helpers computed through float64, which replace floating.wgsl's helpers of the same name in
// float32 kernels on an adapter with shader-f64 and shader-int64 (kernels/elementwise_math.cpp).

// |x|^y for a finite, nonzero |x| and a finite y (pow_ has taken the special cases): 2^(y log2 x)
// with log2 x and the exponential both in float64, within about 2^-37 of the true value before the
// one rounding to float32, for every float32 x and y (WGSL's exp2(y * log2(x)) lost |y log2 x| ulp:
// 438 ulp on average over x in (0, 10), y in (-35, 35) on lavapipe, and flushed subnormal results).
// No step depends on how a driver rounds, contracts or reorders float64 arithmetic beyond a few
// float64 ulp, which stay far below float32's; x's parts and 2^n are built from the bits, so a driver
// that flushes float32 subnormals still reads a subnormal x.
fn pow_core_(ax: f32, y: f32) -> f32 {
  // ax = i 2^e with i a 24-bit integer (a subnormal's significand has no hidden bit).
  let u = bitcast<u32>(ax);
  let biased = u >> 23u;
  let i = select((u & 0x7fffffu) | 0x800000u, u & 0x7fffffu, biased == 0u);
  let top = 31u - countLeadingZeros(i);
  // m = i 2^-top in [1, 2), then in [sqrt(1/2), sqrt(2)); ax = m 2^k.
  var m = f64(i) * bitcast<f64>(u64(1023u - top) << 52u);
  var k = i32(max(biased, 1u)) - 150 + i32(top);
  if (m > 1.4142135623730951) {
    m = m * 0.5;
    k = k + 1;
  }
  // log m = 2 atanh(s), s = (m - 1) / (m + 1) with |s| <= 0.1716: the series to s^21 leaves 2^-60.
  let s = (m - 1.0) / (m + 1.0);
  let s2 = s * s;
  var q: f64 = 1.0 / 21.0;
  q = 1.0 / 19.0 + s2 * q;
  q = 1.0 / 17.0 + s2 * q;
  q = 1.0 / 15.0 + s2 * q;
  q = 1.0 / 13.0 + s2 * q;
  q = 1.0 / 11.0 + s2 * q;
  q = 1.0 / 9.0 + s2 * q;
  q = 1.0 / 7.0 + s2 * q;
  q = 1.0 / 5.0 + s2 * q;
  q = 1.0 / 3.0 + s2 * q;
  q = 1.0 + s2 * q;
  let t = f64(y) * (f64(k) + (2.0 * s * q) * 1.4426950408889634);
  // Past these the float32 result is infinite or zero whatever the rounding.
  if (t >= 128.0) { return bitcast<f32>(0x7f800000u); }
  if (t <= -151.0) { return 0.0; }
  // t = n + f with |f| <= 1/2: n from truncation (|t| < 2^31, so the conversion is exact), then f
  // steps into range with exact subtractions.
  var n = i32(t);
  var f = t - f64(n);
  if (f > 0.5) {
    n = n + 1;
    f = f - 1.0;
  } else if (f < -0.5) {
    n = n - 1;
    f = f + 1.0;
  }
  // e^r for |r| <= 0.347: Taylor to r^13 leaves 2^-58.
  let r = f * 0.6931471805599453;
  var p: f64 = 1.0 / 6227020800.0;
  p = 1.0 / 479001600.0 + r * p;
  p = 1.0 / 39916800.0 + r * p;
  p = 1.0 / 3628800.0 + r * p;
  p = 1.0 / 362880.0 + r * p;
  p = 1.0 / 40320.0 + r * p;
  p = 1.0 / 5040.0 + r * p;
  p = 1.0 / 720.0 + r * p;
  p = 1.0 / 120.0 + r * p;
  p = 1.0 / 24.0 + r * p;
  p = 1.0 / 6.0 + r * p;
  p = 0.5 + r * p;
  p = 1.0 + r * p;
  p = 1.0 + r * p;
  // p 2^n is a normal float64 (n >= -151); one rounding to float32, subnormal results included.
  return narrow_(p * bitcast<f64>(u64(u32(n + 1023)) << 52u));
}

// float64 to float32, rounding to nearest with IEEE overflow to infinity (WGSL leaves the conversion
// of a value past float32's range to the driver): float32's largest value plus half an ulp and up
// round to infinity.
fn narrow_(w: f64) -> f32 {
  if (abs(w) >= 340282356779733661637539395458142568448.0) {
    return select(bitcast<f32>(0x7f800000u), bitcast<f32>(0xff800000u), w < 0.0);
  }
  return f32(w);
}

// a / b correctly rounded. The float64 quotient of two float32 values, within a few float64 ulp of
// the true one on any driver, cannot be close enough to a float32 rounding boundary (a quotient of
// 24-bit significands is never a tie, and stays 2^-48 relative away from one) to round the wrong way.
fn fdiv_(a: f32, b: f32) -> f32 {
  return narrow_(widen_(a) / widen_(b));
}

// sqrt correctly rounded, by the same argument (53 >= 2 x 24 + 2 bits); never past float32's range.
fn fsqrt_(a: f32) -> f32 {
  return f32(sqrt(widen_(a)));
}

// float32 to float64 exactly, a subnormal from its bits (|a| = significand 2^-149): a driver that
// flushes float32 subnormals may flush one on conversion too.
fn widen_(a: f32) -> f64 {
  let u = bitcast<u32>(a);
  if ((u & 0x7f800000u) != 0u) { return f64(a); }
  let m = f64(u & 0x7fffffu) * bitcast<f64>(u64(1023u - 149u) << 52u);
  return select(m, -m, (u & 0x80000000u) != 0u);
}
