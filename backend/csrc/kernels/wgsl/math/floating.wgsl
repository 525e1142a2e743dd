// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// Floating point (f32, and f64 through f64_builtins.wgsl's versions of the builtins).

// Python's modulo on fmod_ (exact_float_math), as the CPU kernel computes it (m + y when m is not
// zero and its sign is not y's). Every step reads or builds the bits (shrink_ for m + y): a driver
// that flushes subnormals called a subnormal m zero and returned a subnormal m + y as zero.
fn fremainder_(x: T, y: T) -> T {
  let m = fmod_(x, y);
  if (is_zero_(m) || isnan_(m) || signbit_(m) == signbit_(y)) { return m; }
  if (isinf_(y)) { return y; }
  return shrink_(y, m);
}

// The CPU's floor division step by step: (a - fmod(a, b)) / b correctly rounded (div_rn_), then
// floored; a quotient off by the ulps WGSL's `/` may lose would floor to the wrong integer, and
// a - fmod(a, b) with a subnormal fmod is shrink_'s (a driver that flushes subnormals took it for
// a). The quotient d is then 0, NaN, infinite or at least 1 in magnitude, where the float steps
// below are exact on any driver.
fn div_floor_(a: T, b: T) -> T {
  if (is_zero_(b)) { return div_rn_(a, b); }
  let m = fmod_(a, b);
  if (isnan_(m)) { return m; }
  var d = div_rn_(shrink_(a, m), b);
  if (!is_zero_(m) && signbit_(b) != signbit_(m)) { d = d - T(1); }
  if (is_zero_(d)) { return copysign_(T(0), div_rn_(a, b)); }
  if (isnan_(d) || isinf_(d)) { return d; }
  var f = floor(d);
  if (d - f > T(0.5)) { f = f + T(1); }
  return f;
}

// Near 0 from series (Kahan's (1 + x) - 1 correction is folded away by some shader compilers:
// lavapipe returned log1p(1e-6) 5% off), elsewhere from exp and log directly.
// expm1_poly_(x) = (e^x - 1) / x for |x| < 0.35: Taylor to x^13, below 2e-16 relative.
fn expm1_poly_(x: T) -> T {
  var p = T(1.6059043836821613e-10);
  p = T(2.08767569878681e-09) + x * p;
  p = T(2.505210838544172e-08) + x * p;
  p = T(2.755731922398589e-07) + x * p;
  p = T(2.755731922398589e-06) + x * p;
  p = T(2.48015873015873e-05) + x * p;
  p = T(0.0001984126984126984) + x * p;
  p = T(0.001388888888888889) + x * p;
  p = T(0.008333333333333333) + x * p;
  p = T(0.041666666666666664) + x * p;
  p = T(0.16666666666666666) + x * p;
  p = T(0.5) + x * p;
  return T(1) + x * p;
}

fn expm1_(x: T) -> T {
  if (abs(x) >= T(0.35)) { return exp(x) - T(1); }
  return x * expm1_poly_(x);
}

// 2 atanh(s) = log((1 + s) / (1 - s)) for |s| < 0.172: the series to s^21.
fn atanh_series_(s: T) -> T {
  let z = s * s;
  var p = T(0.047619047619047616);
  p = T(0.05263157894736842) + z * p;
  p = T(0.058823529411764705) + z * p;
  p = T(0.06666666666666667) + z * p;
  p = T(0.07692307692307693) + z * p;
  p = T(0.09090909090909091) + z * p;
  p = T(0.1111111111111111) + z * p;
  p = T(0.14285714285714285) + z * p;
  p = T(0.2) + z * p;
  p = T(0.3333333333333333) + z * p;
  p = T(1) + z * p;
  return T(2) * s * p;
}

fn log1p_(x: T) -> T {
  if (isnan_(x)) { return x; }
  // log1p(x) rounds to x below 2^-60 (lavapipe's series gave NaN for the smallest subnormal).
  if (abs(x) < T(8.673617379884035e-19)) { return x; }
  if (x < T(-0.2928932188134524) || x > T(0.41421356237309503)) { return log(T(1) + x); }
  return atanh_series_(x / (T(2) + x));
}

// Reduced to |t| <= tan(pi/8) around 0, pi/4 or pi/2, then the series to t^45
// (lavapipe's f32 atan returned 0 for NaN and was 2e-5 off near 0).
fn atan_(x: T) -> T {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  var base = T(0);
  var t = a;
  if (a > T(2.414213562373095)) {
    base = T(1.5707963267948966);
    t = T(-1) / a;
  } else if (a > T(0.41421356237309503)) {
    base = T(0.7853981633974483);
    t = (a - T(1)) / (a + T(1));
  }
  let z = t * t;
  var p = T(0);
  for (var n = 22; n >= 0; n--) {
    p = select(T(1), T(-1), (n & 1) == 1) / T(2 * n + 1) + z * p;
  }
  return copysign_(base + t * p, x);
}

// atan2 away from the points atan2_ settles first (NaN, both zero, both infinite).
fn atan2_finite_(y: T, x: T) -> T {
  let pi = T(3.141592653589793);
  if (isinf_(x)) { return copysign_(select(T(0), pi, x < T(0)), y); }
  if (isinf_(y) || x == T(0)) { return copysign_(T(0.5) * pi, y); }
  let a = atan_(y / x);
  if (!signbit_(x)) { return a; }
  return select(a + pi, a - pi, signbit_(y));
}

// Hyperbolic functions from exp / expm1_ / log1p_: the builtins lose everything to cancellation
// near 0 on some adapters (lavapipe's f32 sinh(1e-6) was 1.3% off) and have no f64 form.
fn sinh_(x: T) -> T {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  if (a < T(1)) {
    let e = expm1_(a);
    return copysign_(T(0.5) * (e + e / (e + T(1))), x);
  }
  if (a > exp_max_()) {
    let h = exp(T(0.5) * a);
    let half = T(0.5) * h;
    return copysign_(half * h, x);
  }
  let e = exp(a);
  return copysign_(T(0.5) * (e - T(1) / e), x);
}

fn cosh_(x: T) -> T {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  if (a > exp_max_()) {
    let h = exp(T(0.5) * a);
    let half = T(0.5) * h;
    return half * h;
  }
  let e = exp(a);
  return T(0.5) * (e + T(1) / e);
}

fn tanh_(x: T) -> T {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  if (a > T(20)) { return copysign_(T(1), x); }
  let e = expm1_(T(2) * a);
  return copysign_(e / (e + T(2)), x);
}

fn asinh_(x: T) -> T {
  if (isnan_(x) || isinf_(x)) { return x; }
  let a = abs(x);
  if (a > T(1e8)) { return copysign_(log(a) + T(0.6931471805599453), x); }
  return copysign_(log1p_(a + a * a / (T(1) + sqrt(T(1) + a * a))), x);
}

fn acosh_(x: T) -> T {
  if (isnan_(x) || x < T(1)) { return nan_(); }
  if (x > T(1e8)) { return log(x) + T(0.6931471805599453); }
  let t = x - T(1);
  return log1p_(t + sqrt(t * (x + T(1))));
}

fn atanh_(x: T) -> T {
  let a = abs(x);
  if (isnan_(x) || a > T(1)) { return nan_(); }
  if (a == T(1)) { return copysign_(inf_(), x); }
  return copysign_(T(0.5) * log1p_(T(2) * a / (T(1) - a)), x);
}

// lavapipe's asin / acos are off by ~4e-4 (and its atan2 by 4e-6): through atan2_ and atan_'s
// polynomial they are accurate to a few ulp.
fn asin_(x: T) -> T {
  return atan2_(x, sqrt((T(1) - x) * (T(1) + x)));
}

fn acos_(x: T) -> T {
  return atan2_(sqrt((T(1) - x) * (T(1) + x)), x);
}

// C's atan2 at the points WGSL leaves undefined (both zero, both infinite).
fn atan2_(y: T, x: T) -> T {
  if (isnan_(y) || isnan_(x)) { return nan_(); }
  if (y == T(0) && x == T(0)) { return copysign_(select(T(0), T(3.141592653589793), signbit_(x)), y); }
  if (isinf_(y) && isinf_(x)) {
    return copysign_(select(T(0.7853981633974483), T(2.356194490192345), x < T(0)), y);
  }
  return atan2_finite_(y, x);
}

// tan reduced by pi/2 in four parts (Cody and Waite: k times each of the leading three, of 8, 11 and
// 11 bits, is exact up to |x| = 8192, so a fused or unfused multiply-add gives the same r, and the
// fourth keeps r's relative precision next to the poles) and Taylor series on |r| <= pi/4.
// The builtin's precision is the driver's (NVIDIA's f32 tan was 1.5e-4 relative off); it is
// kept beyond 8192 only.
fn tan_(x: T) -> T {
  if (isnan_(x) || isinf_(x)) { return nan_(); }
  let ax = abs(x);
  if (ax > T(8192)) { return tan(x); }
  if (ax < T(0.000244140625)) { return x; }
  let k = round(ax * T(0.6366197723675814));
  let r = (((ax - k * T(1.5703125)) - k * T(0.0004837512969970703125)) - k * T(7.549533620476723e-08)) - k * T(2.5633441515945189e-12);
  let z = r * r;
  let s = r + r * z * (T(-0.16666666666666666) + z * (T(0.008333333333333333) + z * (T(-0.0001984126984126984) + z * (T(2.7557319223985893e-06) + z * T(-2.505210838544172e-08)))));
  let c = T(1) + z * (T(-0.5) + z * (T(0.041666666666666664) + z * (T(-0.001388888888888889) + z * (T(2.48015873015873e-05) + z * (T(-2.755731922398589e-07) + z * T(2.08767569878681e-09))))));
  let odd = trunc(k * T(0.5)) != k * T(0.5);
  let v = select(s / c, -c / s, odd);
  return select(v, -v, signbit_(x));
}

fn sigmoid_(x: T) -> T {
  return T(1) / (T(1) + exp(-x));
}

fn softplus_(x: T, beta: T, threshold: T) -> T {
  if (x * beta > threshold) { return x; }
  return log1p_(exp(x * beta)) / beta;
}

// Series near 0, Numerical Recipes' erfc (fractional error below 1.2e-7) elsewhere.
fn erfc_(x: T) -> T {
  let z = abs(x);
  let t = T(1) / (T(1) + T(0.5) * z);
  let r = t * exp(-z * z - T(1.26551223) + t * (T(1.00002368) + t * (T(0.37409196) + t * (T(0.09678418) + t * (T(-0.18628806) + t * (T(0.27886807) + t * (T(-1.13520398) + t * (T(1.48851587) + t * (T(-0.82215223) + t * T(0.17087277))))))))));
  return select(r, T(2) - r, x < T(0));
}

fn erf_(x: T) -> T {
  if (abs(x) < T(0.5)) {
    let x2 = x * x;
    return T(1.1283791670955126) * x * (T(1) + x2 * (T(-0.3333333333333333) + x2 * (T(0.1) + x2 * (T(-0.023809523809523808) + x2 * (T(0.004629629629629629) + x2 * T(-0.0007575757575757576))))));
  }
  return T(1) - erfc_(x);
}

// Giles' single-precision approximation of erfinv for |x| < 1.
fn erfinv_giles_(x: T) -> T {
  var w = -log((T(1) - x) * (T(1) + x));
  var p: T;
  if (w < T(5)) {
    w = w - T(2.5);
    p = T(2.81022636e-08);
    p = T(3.43273939e-07) + p * w;
    p = T(-3.5233877e-06) + p * w;
    p = T(-4.39150654e-06) + p * w;
    p = T(0.00021858087) + p * w;
    p = T(-0.00125372503) + p * w;
    p = T(-0.00417768164) + p * w;
    p = T(0.246640727) + p * w;
    p = T(1.50140941) + p * w;
  } else {
    w = sqrt(w) - T(3);
    p = T(-0.000200214257);
    p = T(0.000100950558) + p * w;
    p = T(0.00134934322) + p * w;
    p = T(-0.00367342844) + p * w;
    p = T(0.00573950773) + p * w;
    p = T(-0.0076224613) + p * w;
    p = T(0.00943887047) + p * w;
    p = T(1.00167406) + p * w;
    p = T(2.83297682) + p * w;
  }
  return p * x;
}

// That, then one Newton step on erf_.
fn erfinv_(x: T) -> T {
  if (abs(x) >= T(1)) { return select(nan_(), copysign_(inf_(), x), abs(x) == T(1)); }
  let y = erfinv_giles_(x);
  return y - (erf_(y) - x) / (T(1.1283791670955126) * exp(-y * y));
}

// a / b and sqrt(a) as the adapter computes them (WGSL allows 2.5 ulp and more; NVIDIA takes it):
// float32 kernels on an adapter with float64 take f32_wide.wgsl's correctly rounded forms.
fn fdiv_(a: T, b: T) -> T { return a / b; }

fn fsqrt_(a: T) -> T { return sqrt(a); }

// pow with a scalar exponent, step by step as the CPU computes it: it special-cases these exponents
// (sqrt, 1 / sqrt, 1 / x, x * x * x, 1 / (x * x): one or two rounded steps where pow_ rounds once),
// and taking its steps keeps results built on them to its bits (normalize's backward with p = 0.5
// cancels terms of 20 to a gradient of 0, where one ulp apart in a term is the whole error). A
// subnormal x goes to pow_, which reads it from the bits where a driver may flush it.
fn pow_scalar_(x: T, y: T) -> T {
  if (!is_subnormal_(x)) {
    if (y == T(0.5)) { return select(fsqrt_(x), nan_(), is_neg_(x)); }
    if (y == T(-0.5)) { return fdiv_(T(1), select(fsqrt_(x), nan_(), is_neg_(x))); }
    if (y == T(-1)) { return fdiv_(T(1), x); }
    if (y == T(3)) { return x * x * x; }
    if (y == T(-2)) { return fdiv_(T(1), x * x); }
  }
  return pow_(x, y);
}

// pow with C's special cases, told from the bits (a driver that flushes subnormals reads one as
// zero: pow(1e-45, -0.3) was inf); pow_core_ takes the finite, nonzero rest. x * x is correctly
// rounded, so y = 2 stays a product.
fn pow_(x: T, y: T) -> T {
  if (y == T(0) || x == T(1)) { return T(1); }
  if (isnan_(x) || isnan_(y)) { return nan_(); }
  if (y == T(1)) { return x; }
  if (y == T(2)) { return x * x; }
  let integral = trunc(y) == y && !isinf_(y);
  let negative = signbit_(x) && integral && trunc(y * T(0.5)) != y * T(0.5);
  if (isinf_(y)) {
    let ax = fabs_(x);
    if (ax == T(1)) { return T(1); }
    return select(T(0), inf_(), (ax > T(1)) == (y > T(0)));
  }
  if (is_zero_(x) || isinf_(x)) {
    let mag = select(T(0), inf_(), is_zero_(x) == (y < T(0)));
    return select(mag, fneg_(mag), negative);
  }
  if (signbit_(x) && !integral) { return nan_(); }
  let r = pow_core_(fabs_(x), y);
  return select(r, fneg_(r), negative);
}

// |x|^y for a finite, nonzero |x| and a finite y other than 0, 1 and 2. Small integral exponents by
// repeated squaring, the rest as exp2(y log2 x), which loses about |y log2 x| ulp (and flushes a
// subnormal result on lavapipe): float32 kernels on an adapter with float64 take f32_wide.wgsl's
// pow_core_ instead.
fn pow_core_(ax: T, y: T) -> T {
  let sub = is_subnormal_(ax);
  if (trunc(y) == y && abs(y) <= T(64) && !sub) {
    var r = T(1);
    var b = ax;
    var e = u32(abs(y));
    while (e != 0u) {
      if ((e & 1u) != 0u) { r = r * b; }
      b = b * b;
      e = e >> 1u;
    }
    return select(r, T(1) / r, y < T(0));
  }
  if (y == T(0.5) && !sub) { return sqrt(ax); }
  return exp2(y * log2_sub_(ax));
}

fn hypot_(x: T, y: T) -> T {
  let ax = abs(x);
  let ay = abs(y);
  if (isinf_(ax) || isinf_(ay)) { return inf_(); }
  if (isnan_(ax) || isnan_(ay)) { return nan_(); }
  let m = max(ax, ay);
  if (m == T(0)) { return T(0); }
  let r = min(ax, ay) / m;
  return m * sqrt(T(1) + r * r);
}

fn logaddexp_(x: T, y: T) -> T {
  if (isnan_(x) || isnan_(y)) { return nan_(); }
  if (isinf_(x) && x == y) { return x; }
  let m = select(y, x, x > y);
  return m + log1p_(exp(-abs(x - y)));
}

fn logaddexp2_(x: T, y: T) -> T {
  if (isnan_(x) || isnan_(y)) { return nan_(); }
  if (isinf_(x) && x == y) { return x; }
  let m = select(y, x, x > y);
  return m + log1p_(exp2(-abs(x - y))) * T(1.4426950408889634);
}

fn xlogy_(x: T, y: T) -> T {
  if (isnan_(y)) { return y; }
  if (x == T(0)) { return T(0); }
  return x * log_sub_(y);
}

fn gelu_(x: T, tanh_approx: T) -> T {
  if (tanh_approx != T(0)) {
    return T(0.5) * x * (T(1) + tanh_(T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
  }
  return T(0.5) * x * (T(1) + erf_(x * T(0.7071067811865476)));
}

fn gelu_backward_(g: T, x: T, tanh_approx: T) -> T {
  if (tanh_approx != T(0)) {
    let k = T(0.7978845608028654);
    let x2 = x * x;
    let th = tanh_(k * (x + T(0.044715) * x2 * x));
    return g * (T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * k * (T(1) + T(0.134145) * x2));
  }
  let cdf = T(0.5) * (T(1) + erf_(x * T(0.7071067811865476)));
  let pdf = exp(T(-0.5) * x * x) * T(0.3989422804014327);
  return g * (cdf + x * pdf);
}

fn logit_(x: T, eps: T) -> T {
  var z = x;
  if (eps >= T(0)) { z = clamp_(x, eps, T(1) - eps); }
  return log(z / (T(1) - z));
}

fn round_decimals_(x: T, scale: T, negative: T) -> T {
  if (negative != T(0)) { return round(x / scale) * scale; }
  return round(x * scale) / scale;
}
