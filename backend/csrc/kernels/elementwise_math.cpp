#include "kernels/elementwise_math.h"
#include "kernels/exact_float_math.h"
#include "kernels/generated/f64_math.h"

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace torch_dml::kernels {
namespace {

struct Helper {
  const char* name;
  const char* code; // `T` is the computation type
};

// Bit-level tests: WGSL implementations may assume NaN and infinities never occur, so comparisons
// cannot be trusted to detect them.
const Helper kF32Bits[] = {
    {"isnan_", "fn isnan_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }\n"},
    {"isinf_", "fn isinf_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }\n"},
    {"signbit_", "fn signbit_(x: f32) -> bool { return bitcast<u32>(x) >= 0x80000000u; }\n"},
    {"nan_", "fn nan_() -> f32 { return bitcast<f32>(0x7fc00000u); }\n"},
    {"inf_", "fn inf_() -> f32 { return bitcast<f32>(0x7f800000u); }\n"},
    {"copysign_", "fn copysign_(x: f32, y: f32) -> f32 {\n"
                  "  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));\n}\n"},
    // Below this, exp(x) is finite: sinh and cosh take e^x / 2 directly.
    {"exp_max_", "fn exp_max_() -> f32 { return 88.0; }\n"},
    {"nextafter_", "fn nextafter_(x: f32, y: f32) -> f32 {\n"
                   "  if (isnan_(x) || isnan_(y)) { return nan_(); }\n"
                   "  let ux = bitcast<u32>(x);\n  let uy = bitcast<u32>(y);\n"
                   "  if (ux == uy || ((ux | uy) & 0x7fffffffu) == 0u) { return y; }\n"
                   "  if ((ux & 0x7fffffffu) == 0u) { return bitcast<f32>((uy & 0x80000000u) | 1u); }\n"
                   "  // Away from zero when y is beyond x on x's side.\n"
                   "  let away = (x < y) != signbit_(x);\n"
                   "  return bitcast<f32>(select(ux - 1u, ux + 1u, away));\n}\n"},
};

const Helper kF64Bits[] = {
    {"isnan_", "fn isnan_(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }\n"},
    {"isinf_", "fn isinf_(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu; }\n"},
    {"signbit_", "fn signbit_(x: f64) -> bool { return bitcast<u64>(x) >= 0x8000000000000000lu; }\n"},
    {"nan_", "fn nan_() -> f64 { return bitcast<f64>(0x7ff8000000000000lu); }\n"},
    {"inf_", "fn inf_() -> f64 { return bitcast<f64>(0x7ff0000000000000lu); }\n"},
    {"copysign_", "fn copysign_(x: f64, y: f64) -> f64 {\n  return bitcast<f64>((bitcast<u64>(x) & 0x7fffffffffffffffl"
                  "u) | (bitcast<u64>(y) & 0x8000000000000000lu));\n}\n"},
    {"exp_max_", "fn exp_max_() -> f64 { return 709.0; }\n"},
    {"nextafter_", "fn nextafter_(x: f64, y: f64) -> f64 {\n"
                   "  if (isnan_(x) || isnan_(y)) { return nan_(); }\n"
                   "  let ux = bitcast<u64>(x);\n  let uy = bitcast<u64>(y);\n"
                   "  if (ux == uy || ((ux | uy) & 0x7ffffffffffffffflu) == 0lu) { return y; }\n"
                   "  if ((ux & 0x7ffffffffffffffflu) == 0lu) { return bitcast<f64>((uy & 0x8000000000000000lu) | 1lu); }\n"
                   "  let away = (x < y) != signbit_(x);\n"
                   "  return bitcast<f64>(select(ux - 1lu, ux + 1lu, away));\n}\n"},
};

const Helper kIntBits[] = {
    {"isnan_", "fn isnan_(x: T) -> bool { return false; }\n"},
    {"isinf_", "fn isinf_(x: T) -> bool { return false; }\n"},
    {"signbit_", "fn signbit_(x: T) -> bool { return x < T(0); }\n"},
};

// Helpers written once for any computation type (ints included).
const Helper kGeneric[] = {
    {"maximum_", "fn maximum_(x: T, y: T) -> T {\n  if (isnan_(x)) { return x; }\n  if (isnan_(y)) { return y; }\n"
                 "  return select(y, x, x > y);\n}\n"},
    {"minimum_", "fn minimum_(x: T, y: T) -> T {\n  if (isnan_(x)) { return x; }\n  if (isnan_(y)) { return y; }\n"
                 "  return select(y, x, x < y);\n}\n"},
    {"fmax_", "fn fmax_(x: T, y: T) -> T {\n  if (isnan_(x)) { return y; }\n  if (isnan_(y)) { return x; }\n"
              "  return select(y, x, x > y);\n}\n"},
    {"fmin_", "fn fmin_(x: T, y: T) -> T {\n  if (isnan_(x)) { return y; }\n  if (isnan_(y)) { return x; }\n"
              "  return select(y, x, x < y);\n}\n"},
    // clamp(x, lo, hi) with PyTorch's NaN rule: any NaN among the three gives NaN.
    {"clamp_", "fn clamp_(x: T, lo: T, hi: T) -> T {\n  return minimum_(maximum_(x, lo), hi);\n}\n"},
    {"sign_", "fn sign_(x: T) -> T {\n  return select(select(T(0), T(-1), x < T(0)), T(1), x > T(0));\n}\n"},
    // Truncated division and remainder of signed integers with nothing left to the driver: SPIR-V's
    // OpSRem / OpSMod (what WGSL's `%` becomes) are undefined for negative operands without
    // VK_KHR_maintenance8 (NVIDIA returns the remainder of the unsigned bit patterns), while OpSDiv
    // is defined, so the remainder comes from the quotient. Division by zero gives -1 and a zero
    // divisor's remainder is the dividend on every adapter (CUDA's answers; the CPU raises instead).
    {"tdiv_", "fn tdiv_(x: T, y: T) -> T {\n  if (y == T(0)) { return T(-1); }\n  if (y == T(-1)) { return -x; }\n"
              "  return x / y;\n}\n"},
    {"trem_", "fn trem_(x: T, y: T) -> T {\n  if (y == T(0)) { return x; }\n  if (y == T(-1)) { return T(0); }\n"
              "  return x - y * (x / y);\n}\n"},
    // Python's modulo: the result takes the divisor's sign.
    {"remainder_", "fn remainder_(x: T, y: T) -> T {\n  var m = trem_(x, y);\n"
                   "  if (m != T(0) && ((y < T(0)) != (m < T(0)))) { m = m + y; }\n  return m;\n}\n"},
    {"div_floor_int_", "fn div_floor_int_(x: T, y: T) -> T {\n  if (y == T(0)) { return T(-1); }\n  var q = tdiv_(x, y);\n"
                       "  if ((trem_(x, y) != T(0)) && ((x < T(0)) != (y < T(0)))) { q = q - T(1); }\n  return q;\n}\n"},
    // Integer powers by squaring; negative exponents give 0 except for bases 1 and -1 (PyTorch's rule).
    {"pow_int_", "fn pow_int_(x: T, y: T) -> T {\n"
                 "  if (y < T(0)) {\n    if (x == T(1)) { return T(1); }\n"
                 "    if (x == T(-1)) { return select(T(1), T(-1), (y & T(1)) != T(0)); }\n    return T(0);\n  }\n"
                 "  var r = T(1);\n  var b = x;\n  var e = y;\n"
                 "  while (e != T(0)) {\n    if ((e & T(1)) != T(0)) { r = r * b; }\n    b = b * b;\n    e = e >> 1u;\n  }\n"
                 "  return r;\n}\n"},
    {"shl_", "fn shl_(x: T, y: T) -> T {\n  if (y < T(0) || y >= T(BITS)) { return T(0); }\n  return x << u32(y);\n}\n"},
    {"shr_", "fn shr_(x: T, y: T) -> T {\n  if (y < T(0) || y >= T(BITS)) { return x >> u32(BITS - 1); }\n"
             "  return x >> u32(y);\n}\n"},
    {"lerp_", "fn lerp_(x: T, y: T, w: T) -> T {\n"
              "  return select(y - (y - x) * (T(1) - w), x + w * (y - x), abs(w) < T(0.5));\n}\n"},
};

// Floating point (f32, and f64 through kF64Math's builtins).
const Helper kFloat[] = {
    // Python's modulo on fmod_ (exact_float_math), as the CPU kernel computes it; the tests on m and y
    // read the bits, since a driver that flushes subnormals would call a subnormal m zero.
    {"fremainder_", "fn fremainder_(x: T, y: T) -> T {\n  var m = fmod_(x, y);\n"
                    "  if (!is_zero_(m) && is_neg_(y) != is_neg_(m)) { m = m + y; }\n  return m;\n}\n"},
    // The CPU's floor division step by step: (a - fmod(a, b)) / b correctly rounded (div_rn_), then
    // floored; a quotient off by the ulps WGSL's `/` may lose would floor to the wrong integer.
    {"div_floor_", "fn div_floor_(a: T, b: T) -> T {\n  if (is_zero_(b)) { return div_rn_(a, b); }\n  let m = fmod_(a, b);\n"
                   "  var d = div_rn_(a - m, b);\n  if (!is_zero_(m) && is_neg_(b) != is_neg_(m)) { d = d - T(1); }\n"
                   "  if (is_zero_(d)) { return copysign_(T(0), div_rn_(a, b)); }\n  var f = floor(d);\n"
                   "  if (d - f > T(0.5)) { f = f + T(1); }\n  return f;\n}\n"},
    // Near 0 from series (Kahan's (1 + x) - 1 correction is folded away by some shader compilers:
    // lavapipe returned log1p(1e-6) 5% off), elsewhere from exp and log directly.
    // expm1_poly_(x) = (e^x - 1) / x for |x| < 0.35: Taylor to x^13, below 2e-16 relative.
    {"expm1_poly_", "fn expm1_poly_(x: T) -> T {\n  var p = T(1.6059043836821613e-10);\n"
                    "  p = T(2.08767569878681e-09) + x * p;\n  p = T(2.505210838544172e-08) + x * p;\n"
                    "  p = T(2.755731922398589e-07) + x * p;\n  p = T(2.755731922398589e-06) + x * p;\n"
                    "  p = T(2.48015873015873e-05) + x * p;\n  p = T(0.0001984126984126984) + x * p;\n"
                    "  p = T(0.001388888888888889) + x * p;\n  p = T(0.008333333333333333) + x * p;\n"
                    "  p = T(0.041666666666666664) + x * p;\n  p = T(0.16666666666666666) + x * p;\n"
                    "  p = T(0.5) + x * p;\n  return T(1) + x * p;\n}\n"},
    {"expm1_", "fn expm1_(x: T) -> T {\n  if (abs(x) >= T(0.35)) { return exp(x) - T(1); }\n"
               "  return x * expm1_poly_(x);\n}\n"},
    // 2 atanh(s) = log((1 + s) / (1 - s)) for |s| < 0.172: the series to s^21.
    {"atanh_series_", "fn atanh_series_(s: T) -> T {\n  let z = s * s;\n  var p = T(0.047619047619047616);\n"
                      "  p = T(0.05263157894736842) + z * p;\n  p = T(0.058823529411764705) + z * p;\n"
                      "  p = T(0.06666666666666667) + z * p;\n  p = T(0.07692307692307693) + z * p;\n"
                      "  p = T(0.09090909090909091) + z * p;\n  p = T(0.1111111111111111) + z * p;\n"
                      "  p = T(0.14285714285714285) + z * p;\n  p = T(0.2) + z * p;\n"
                      "  p = T(0.3333333333333333) + z * p;\n  p = T(1) + z * p;\n  return T(2) * s * p;\n}\n"},
    {"log1p_", "fn log1p_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n"
               "  if (x < T(-0.2928932188134524) || x > T(0.41421356237309503)) { return log(T(1) + x); }\n"
               "  return atanh_series_(x / (T(2) + x));\n}\n"},
    // Reduced to |t| <= tan(pi/8) around 0, pi/4 or pi/2, then the series to t^45
    // (lavapipe's f32 atan returned 0 for NaN and was 2e-5 off near 0).
    {"atan_", "fn atan_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n  let a = abs(x);\n"
               "  var base = T(0);\n  var t = a;\n"
               "  if (a > T(2.414213562373095)) {\n    base = T(1.5707963267948966);\n    t = T(-1) / a;\n"
               "  } else if (a > T(0.41421356237309503)) {\n    base = T(0.7853981633974483);\n    t = (a - T(1)) / (a + T(1));\n  }\n"
               "  let z = t * t;\n  var p = T(0);\n"
               "  for (var n = 22; n >= 0; n--) {\n    p = select(T(1), T(-1), (n & 1) == 1) / T(2 * n + 1) + z * p;\n  }\n"
               "  return copysign_(base + t * p, x);\n}\n"},
    // atan2 away from the points atan2_ settles first (NaN, both zero, both infinite).
    {"atan2_finite_", "fn atan2_finite_(y: T, x: T) -> T {\n  let pi = T(3.141592653589793);\n"
                "  if (isinf_(x)) { return copysign_(select(T(0), pi, x < T(0)), y); }\n"
                "  if (isinf_(y) || x == T(0)) { return copysign_(T(0.5) * pi, y); }\n"
                "  let a = atan_(y / x);\n  if (!signbit_(x)) { return a; }\n"
                "  return select(a + pi, a - pi, signbit_(y));\n}\n"},
    // Hyperbolic functions from exp / expm1_ / log1p_: the builtins lose everything to cancellation
    // near 0 on some adapters (lavapipe's f32 sinh(1e-6) was 1.3% off) and have no f64 form.
    {"sinh_", "fn sinh_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n  let a = abs(x);\n"
               "  if (a < T(1)) {\n    let e = expm1_(a);\n    return copysign_(T(0.5) * (e + e / (e + T(1))), x);\n  }\n"
               "  if (a > exp_max_()) {\n    let h = exp(T(0.5) * a);\n    let half = T(0.5) * h;\n    return copysign_(half * h, x);\n  }\n"
               "  let e = exp(a);\n  return copysign_(T(0.5) * (e - T(1) / e), x);\n}\n"},
    {"cosh_", "fn cosh_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n  let a = abs(x);\n"
               "  if (a > exp_max_()) {\n    let h = exp(T(0.5) * a);\n    let half = T(0.5) * h;\n    return half * h;\n  }\n"
               "  let e = exp(a);\n  return T(0.5) * (e + T(1) / e);\n}\n"},
    {"tanh_", "fn tanh_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n  let a = abs(x);\n"
               "  if (a > T(20)) { return copysign_(T(1), x); }\n  let e = expm1_(T(2) * a);\n"
               "  return copysign_(e / (e + T(2)), x);\n}\n"},
    {"asinh_", "fn asinh_(x: T) -> T {\n  if (isnan_(x) || isinf_(x)) { return x; }\n  let a = abs(x);\n"
                "  if (a > T(1e8)) { return copysign_(log(a) + T(0.6931471805599453), x); }\n"
                "  return copysign_(log1p_(a + a * a / (T(1) + sqrt(T(1) + a * a))), x);\n}\n"},
    {"acosh_", "fn acosh_(x: T) -> T {\n  if (isnan_(x) || x < T(1)) { return nan_(); }\n"
                "  if (x > T(1e8)) { return log(x) + T(0.6931471805599453); }\n"
                "  let t = x - T(1);\n  return log1p_(t + sqrt(t * (x + T(1))));\n}\n"},
    {"atanh_", "fn atanh_(x: T) -> T {\n  let a = abs(x);\n  if (isnan_(x) || a > T(1)) { return nan_(); }\n"
                "  if (a == T(1)) { return copysign_(inf_(), x); }\n"
                "  return copysign_(T(0.5) * log1p_(T(2) * a / (T(1) - a)), x);\n}\n"},
    // lavapipe's asin / acos are off by ~4e-4 (and its atan2 by 4e-6): through atan2_ and atan_'s
    // polynomial they are accurate to a few ulp.
    {"asin_", "fn asin_(x: T) -> T {\n  return atan2_(x, sqrt((T(1) - x) * (T(1) + x)));\n}\n"},
    {"acos_", "fn acos_(x: T) -> T {\n  return atan2_(sqrt((T(1) - x) * (T(1) + x)), x);\n}\n"},
    // C's atan2 at the points WGSL leaves undefined (both zero, both infinite).
    {"atan2_", "fn atan2_(y: T, x: T) -> T {\n  if (isnan_(y) || isnan_(x)) { return nan_(); }\n"
               "  if (y == T(0) && x == T(0)) { return copysign_(select(T(0), T(3.141592653589793), signbit_(x)), y); }\n"
               "  if (isinf_(y) && isinf_(x)) {\n"
               "    return copysign_(select(T(0.7853981633974483), T(2.356194490192345), x < T(0)), y);\n  }\n"
               "  return atan2_finite_(y, x);\n}\n"},
    // tan reduced by pi/2 in four parts (Cody and Waite: k times each of the leading three, of 8, 11 and
    // 11 bits, is exact up to |x| = 8192, so a fused or unfused multiply-add gives the same r, and the
    // fourth keeps r's relative precision next to the poles) and Taylor series on |r| <= pi/4.
    // The builtin's precision is the driver's (NVIDIA's f32 tan was 1.5e-4 relative off); it is
    // kept beyond 8192 only.
    {"tan_", "fn tan_(x: T) -> T {\n  if (isnan_(x) || isinf_(x)) { return nan_(); }\n  let ax = abs(x);\n"
             "  if (ax > T(8192)) { return tan(x); }\n  if (ax < T(0.000244140625)) { return x; }\n"
             "  let k = round(ax * T(0.6366197723675814));\n"
             "  let r = (((ax - k * T(1.5703125)) - k * T(0.0004837512969970703125)) - k * T(7.549533620476723e-08))"
             " - k * T(2.5633441515945189e-12);\n"
             "  let z = r * r;\n"
             "  let s = r + r * z * (T(-0.16666666666666666) + z * (T(0.008333333333333333) + z * (T(-0.0001984126984126984)"
             " + z * (T(2.7557319223985893e-06) + z * T(-2.505210838544172e-08)))));\n"
             "  let c = T(1) + z * (T(-0.5) + z * (T(0.041666666666666664) + z * (T(-0.001388888888888889)"
             " + z * (T(2.48015873015873e-05) + z * (T(-2.755731922398589e-07) + z * T(2.08767569878681e-09))))));\n"
             "  let odd = trunc(k * T(0.5)) != k * T(0.5);\n"
             "  let v = select(s / c, -c / s, odd);\n  return select(v, -v, signbit_(x));\n}\n"},
    {"sigmoid_", "fn sigmoid_(x: T) -> T {\n  return T(1) / (T(1) + exp(-x));\n}\n"},
    {"softplus_", "fn softplus_(x: T, beta: T, threshold: T) -> T {\n"
                  "  if (x * beta > threshold) { return x; }\n  return log1p_(exp(x * beta)) / beta;\n}\n"},
    // Series near 0, Numerical Recipes' erfc (fractional error below 1.2e-7) elsewhere.
    {"erfc_", "fn erfc_(x: T) -> T {\n  let z = abs(x);\n  let t = T(1) / (T(1) + T(0.5) * z);\n"
              "  let r = t * exp(-z * z - T(1.26551223) + t * (T(1.00002368) + t * (T(0.37409196) + t * (T(0.09678418)"
              " + t * (T(-0.18628806) + t * (T(0.27886807) + t * (T(-1.13520398) + t * (T(1.48851587)"
              " + t * (T(-0.82215223) + t * T(0.17087277))))))))));\n"
              "  return select(r, T(2) - r, x < T(0));\n}\n"},
    {"erf_", "fn erf_(x: T) -> T {\n  if (abs(x) < T(0.5)) {\n    let x2 = x * x;\n"
             "    return T(1.1283791670955126) * x * (T(1) + x2 * (T(-0.3333333333333333) + x2 * (T(0.1)"
             " + x2 * (T(-0.023809523809523808) + x2 * (T(0.004629629629629629) + x2 * T(-0.0007575757575757576))))));\n"
             "  }\n  return T(1) - erfc_(x);\n}\n"},
    // Giles' single-precision approximation of erfinv for |x| < 1.
    {"erfinv_giles_", "fn erfinv_giles_(x: T) -> T {\n"
                "  var w = -log((T(1) - x) * (T(1) + x));\n  var p: T;\n"
                "  if (w < T(5)) {\n    w = w - T(2.5);\n    p = T(2.81022636e-08);\n"
                "    p = T(3.43273939e-07) + p * w;\n    p = T(-3.5233877e-06) + p * w;\n"
                "    p = T(-4.39150654e-06) + p * w;\n    p = T(0.00021858087) + p * w;\n"
                "    p = T(-0.00125372503) + p * w;\n    p = T(-0.00417768164) + p * w;\n"
                "    p = T(0.246640727) + p * w;\n    p = T(1.50140941) + p * w;\n"
                "  } else {\n    w = sqrt(w) - T(3);\n    p = T(-0.000200214257);\n"
                "    p = T(0.000100950558) + p * w;\n    p = T(0.00134934322) + p * w;\n"
                "    p = T(-0.00367342844) + p * w;\n    p = T(0.00573950773) + p * w;\n"
                "    p = T(-0.0076224613) + p * w;\n    p = T(0.00943887047) + p * w;\n"
                "    p = T(1.00167406) + p * w;\n    p = T(2.83297682) + p * w;\n  }\n"
                "  return p * x;\n}\n"},
    // That, then one Newton step on erf_.
    {"erfinv_", "fn erfinv_(x: T) -> T {\n  if (abs(x) >= T(1)) { return select(nan_(), copysign_(inf_(), x), abs(x) == T(1)); }\n"
                "  let y = erfinv_giles_(x);\n"
                "  return y - (erf_(y) - x) / (T(1.1283791670955126) * exp(-y * y));\n}\n"},
    // pow with C's special cases; integer exponents up to 64 by repeated squaring for accuracy.
    {"pow_", "fn pow_(x: T, y: T) -> T {\n  if (y == T(0) || x == T(1)) { return T(1); }\n"
             "  if (isnan_(x) || isnan_(y)) { return nan_(); }\n"
             "  let integral = trunc(y) == y && !isinf_(y);\n"
             "  let odd = integral && trunc(y * T(0.5)) != y * T(0.5);\n"
             "  if (integral && abs(y) <= T(64)) {\n    var r = T(1);\n    var b = x;\n    var e = u32(abs(y));\n"
             "    while (e != 0u) {\n      if ((e & 1u) != 0u) { r = r * b; }\n      b = b * b;\n      e = e >> 1u;\n    }\n"
             "    return select(r, T(1) / r, y < T(0));\n  }\n"
             "  if (y == T(0.5)) { return select(sqrt(x), inf_(), isinf_(x)); }\n"
             "  if (x == T(0)) { return select(select(T(0), x, odd), select(inf_(), copysign_(inf_(), x), odd), y < T(0)); }\n"
             "  if (isinf_(y)) {\n    let ax = abs(x);\n    if (ax == T(1)) { return T(1); }\n"
             "    return select(T(0), inf_(), (ax > T(1)) == (y > T(0)));\n  }\n"
             "  if (isinf_(x) && x < T(0)) {\n    let mag = select(T(0), inf_(), y > T(0));\n"
             "    return select(mag, -mag, odd);\n  }\n"
             "  let r = exp2(y * log2(abs(x)));\n"
             "  if (x < T(0)) {\n    if (!integral) { return nan_(); }\n    return select(r, -r, odd);\n  }\n"
             "  return r;\n}\n"},
    {"hypot_", "fn hypot_(x: T, y: T) -> T {\n  let ax = abs(x);\n  let ay = abs(y);\n"
               "  if (isinf_(ax) || isinf_(ay)) { return inf_(); }\n  if (isnan_(ax) || isnan_(ay)) { return nan_(); }\n"
               "  let m = max(ax, ay);\n  if (m == T(0)) { return T(0); }\n  let r = min(ax, ay) / m;\n"
               "  return m * sqrt(T(1) + r * r);\n}\n"},
    {"logaddexp_", "fn logaddexp_(x: T, y: T) -> T {\n  if (isnan_(x) || isnan_(y)) { return nan_(); }\n"
                   "  if (isinf_(x) && x == y) { return x; }\n  let m = select(y, x, x > y);\n"
                   "  return m + log1p_(exp(-abs(x - y)));\n}\n"},
    {"logaddexp2_", "fn logaddexp2_(x: T, y: T) -> T {\n  if (isnan_(x) || isnan_(y)) { return nan_(); }\n"
                    "  if (isinf_(x) && x == y) { return x; }\n  let m = select(y, x, x > y);\n"
                    "  return m + log1p_(exp2(-abs(x - y))) * T(1.4426950408889634);\n}\n"},
    {"xlogy_", "fn xlogy_(x: T, y: T) -> T {\n  if (isnan_(y)) { return y; }\n  if (x == T(0)) { return T(0); }\n"
               "  return x * log(y);\n}\n"},
    {"gelu_", "fn gelu_(x: T, tanh_approx: T) -> T {\n  if (tanh_approx != T(0)) {\n"
              "    return T(0.5) * x * (T(1) + tanh_(T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));\n  }\n"
              "  return T(0.5) * x * (T(1) + erf_(x * T(0.7071067811865476)));\n}\n"},
    {"gelu_backward_", "fn gelu_backward_(g: T, x: T, tanh_approx: T) -> T {\n  if (tanh_approx != T(0)) {\n"
                       "    let k = T(0.7978845608028654);\n    let x2 = x * x;\n"
                       "    let th = tanh_(k * (x + T(0.044715) * x2 * x));\n"
                       "    return g * (T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * k * (T(1) + T(0.134145) * x2));\n"
                       "  }\n  let cdf = T(0.5) * (T(1) + erf_(x * T(0.7071067811865476)));\n"
                       "  let pdf = exp(T(-0.5) * x * x) * T(0.3989422804014327);\n  return g * (cdf + x * pdf);\n}\n"},
    {"logit_", "fn logit_(x: T, eps: T) -> T {\n  var z = x;\n"
               "  if (eps >= T(0)) { z = clamp_(x, eps, T(1) - eps); }\n  return log(z / (T(1) - z));\n}\n"},
    {"round_decimals_", "fn round_decimals_(x: T, scale: T, negative: T) -> T {\n"
                        "  if (negative != T(0)) { return round(x / scale) * scale; }\n  return round(x * scale) / scale;\n}\n"},
};

// Payne and Hanek's reduction of |x| > pi/4 by pi/2, exact for every finite float64: |x| = m 2^e
// with m a 53-bit integer, and (2/pi) |x| mod 4 depends only on the 192 bits of 2/pi from bit e - 1
// on (the earlier ones make multiples of 4; 192 bits keep 2^-115 of the fraction, past the closest
// any float64 comes to a multiple of pi/2). The product is done in 32-bit limbs, so the result is
// exact whatever the shader compiler does to floating point. Returns (quadrant, r as a pair hi + lo)
// with |r| <= pi/4.
const std::string kTrigReduce = std::string(generated::kTwoOverPi) +
    "fn trig_reduce_d(ax: T) -> vec3<f64> {\n"
    "  let u = bitcast<u64>(ax);\n  let e = i32(u32(u >> 52u)) - 1075;\n"
    "  let m = (u & 0x000ffffffffffffflu) | 0x0010000000000000lu;\n"
    "  let mh = m >> 32u;\n  let ml = m & 0xfffffffflu;\n"
    "  let j = u32(e + 62);\n  let wi = j >> 5u;\n  let s = j & 31u;\n"
    "  var w: array<u32, 6>;\n"
    "  for (var k = 0u; k < 6u; k++) {\n"
    "    let a = TWO_OVER_PI_[wi + 5u - k];\n    let b = TWO_OVER_PI_[wi + 6u - k];\n"
    "    w[k] = select(a, (a << s) | (b >> (32u - s)), s != 0u);\n  }\n"
    "  var r: array<u32, 6>;\n  var carry = 0lu;\n"
    "  for (var k = 0u; k < 6u; k++) {\n"
    "    let p = ml * u64(w[k]) + carry;\n    r[k] = u32(p & 0xfffffffflu);\n    carry = p >> 32u;\n  }\n"
    "  carry = 0lu;\n"
    "  for (var k = 1u; k < 6u; k++) {\n"
    "    let p = u64(r[k]) + mh * u64(w[k - 1u]) + carry;\n    r[k] = u32(p & 0xfffffffflu);\n    carry = p >> 32u;\n  }\n"
    "  // The top two bits are the quadrant; a fraction of 1/2 or more rounds it up and turns negative.\n"
    "  var q = r[5] >> 30u;\n  r[5] = r[5] & 0x3fffffffu;\n  let negative = (r[5] >> 29u) != 0u;\n"
    "  if (negative) {\n    q = q + 1u;\n    var c = 1lu;\n"
    "    for (var k = 0u; k < 6u; k++) {\n"
    "      let t = u64(~r[k]) + c;\n      r[k] = u32(t & 0xfffffffflu);\n      c = t >> 32u;\n    }\n"
    "    r[5] = r[5] & 0x3fffffffu;\n  }\n"
    "  var shift = 0u;\n"
    "  for (var k = 0u; k < 6u && r[5] == 0u; k++) {\n"
    "    r[5] = r[4];\n    r[4] = r[3];\n    r[3] = r[2];\n    r[2] = r[1];\n    r[1] = r[0];\n    r[0] = 0u;\n"
    "    shift = shift + 32u;\n  }\n"
    "  if (r[5] == 0u) { return vec3<f64>(T(q & 3u), T(0), T(0)); }\n"
    "  let lz = countLeadingZeros(r[5]);\n"
    "  var t5 = r[5];\n  var t4 = r[4];\n  var t3 = r[3];\n"
    "  if (lz != 0u) {\n"
    "    t5 = (r[5] << lz) | (r[4] >> (32u - lz));\n    t4 = (r[4] << lz) | (r[3] >> (32u - lz));\n"
    "    t3 = (r[3] << lz) | (r[2] >> (32u - lz));\n  }\n"
    "  // The fraction's leading 96 bits as hi (53 bits) + lo (43 bits), each converted exactly.\n"
    "  let h = (u64(t5) << 32u) | u64(t4);\n  let scale = i32(shift + lz);\n"
    "  var hi = ldexp_d(T(h & 0xfffffffffffff800lu), -62 - scale);\n"
    "  var lo = ldexp_d(T(h & 0x7fflu) * T(4294967296.0) + T(t3), -94 - scale);\n"
    "  if (negative) {\n    hi = -hi;\n    lo = -lo;\n  }\n"
    "  // times pi/2 (hi + lo parts), keeping the rounding error of the leading product. The pair is\n"
    "  // left unnormalised: renormalising is an identity some compilers fold away.\n"
    "  let p = two_prod_(hi, T(1.5707963267948966));\n"
    "  let rl = p.y + (hi * T(6.123233995736766e-17) + lo * T(1.5707963267948966));\n"
    "  return vec3<f64>(T(q & 3u), p.x, rl);\n}\n";

// float64 versions of the WGSL builtins that have none for f64 (exp, exp2, log, log2, sin, cos, tan):
// substitute_type() renames the builtin calls in f64 kernels to these. Range reduction plus a
// polynomial, accurate to a few ulp across the whole range (pow through exp2/log2 loses about
// |y log2 x| ulp; sin and cos are within an ulp, tan two).
const Helper kF64Math[] = {
    {"ldexp_d", "fn ldexp_d(x: T, k: i32) -> T {\n  var y = x;\n  var e = k;\n"
                "  if (e > 1023) {\n    y = y * bitcast<f64>(0x7fe0000000000000lu);\n    e = min(e - 1023, 1023);\n  }\n"
                "  if (e < -1022) {\n    y = y * bitcast<f64>(0x0010000000000000lu);\n    e = e + 1022;\n"
                "    if (e < -1022) {\n      y = y * bitcast<f64>(0x0010000000000000lu);\n      e = max(e + 1022, -1022);\n    }\n  }\n"
                "  return y * bitcast<f64>(u64(u32(e + 1023)) << 52u);\n}\n"},
    // trunc and round from the bits: lavapipe's float64 trunc and round return their argument
    // unchanged from 2^31 up (as if every such value were integral, true of float32 only).
    {"trunc_d", "fn trunc_d(x: T) -> T {\n  let u = bitcast<u64>(x);\n  let e = i32(u32(u >> 52u) & 0x7ffu) - 1023;\n"
                "  if (e >= 52) { return x; }\n  if (e < 0) { return copysign_(T(0), x); }\n"
                "  return bitcast<f64>(u & ~(0x000ffffffffffffflu >> u32(e)));\n}\n"},
    // Halves to even, as WGSL's round.
    {"round_d", "fn round_d(x: T) -> T {\n  let a = abs(x);\n  if (!(a < T(4503599627370496.0))) { return x; }\n"
                "  let t = trunc_d(a);\n  let d = a - t;\n"
                "  let up = d > T(0.5) || (d == T(0.5) && trunc_d(t * T(0.5)) * T(2) != t);\n"
                "  return copysign_(select(t, t + T(1), up), x);\n}\n"},
    {"exp_d", "fn exp_d(x: T) -> T {\n  if (isnan_(x)) { return x; }\n"
              "  if (x > T(709.782712893384)) { return inf_(); }\n  if (x < T(-745.1332191019412)) { return T(0); }\n"
              "  let k = round(x * T(1.4426950408889634));\n"
              "  // ln 2 in two parts (the first with trailing zero bits): k * hi is exact.\n"
              "  let r = (x - k * T(0.6931471803691238)) - k * T(1.9082149292705877e-10);\n"
              "  return ldexp_d(T(1) + r * expm1_poly_(r), i32(k));\n}\n"},
    {"exp2_d", "fn exp2_d(x: T) -> T {\n  if (isnan_(x)) { return x; }\n"
               "  if (x >= T(1024)) { return inf_(); }\n  if (x < T(-1075)) { return T(0); }\n"
               "  let k = round(x);\n  let r = (x - k) * T(0.6931471805599453);\n"
               "  return ldexp_d(T(1) + r * expm1_poly_(r), i32(k));\n}\n"},
    // x = 2^e m with m in [sqrt(1/2), sqrt(2)), for finite positive x: (e, log m), log m from the
    // atanh series of (m - 1) / (m + 1).
    {"log_parts_d", "fn log_parts_d(x: T) -> vec2<f64> {\n  var y = x;\n  var e = 0;\n"
                    "  if (y < T(2.2250738585072014e-308)) {\n    y = y * T(18014398509481984.0);\n    e = -54;\n  }\n"
                    "  let u = bitcast<u64>(y);\n  e = e + i32(u32(u >> 52u)) - 1023;\n"
                    "  var m = bitcast<f64>((u & 0x000ffffffffffffflu) | 0x3ff0000000000000lu);\n"
                    "  if (m > T(1.4142135623730951)) {\n    m = m * T(0.5);\n    e = e + 1;\n  }\n"
                    "  return vec2<f64>(T(e), atanh_series_((m - T(1)) / (m + T(1))));\n}\n"},
    {"log_d", "fn log_d(x: T) -> T {\n  if (isnan_(x) || x < T(0)) { return nan_(); }\n"
              "  if (x == T(0)) { return -inf_(); }\n  if (isinf_(x)) { return x; }\n  let q = log_parts_d(x);\n"
              "  return q.x * T(0.6931471803691238) + (q.y + q.x * T(1.9082149292705877e-10));\n}\n"},
    {"log2_d", "fn log2_d(x: T) -> T {\n  if (isnan_(x) || x < T(0)) { return nan_(); }\n"
               "  if (x == T(0)) { return -inf_(); }\n  if (isinf_(x)) { return x; }\n  let q = log_parts_d(x);\n"
               "  return q.x + q.y * T(1.4426950408889634);\n}\n"},
    {"trig_reduce_d", kTrigReduce.c_str()},
    {"trig_arg_d", "fn trig_arg_d(ax: T) -> vec3<f64> {\n"
                   "  if (ax <= T(0.7853981633974483)) { return vec3<f64>(T(0), ax, T(0)); }\n"
                   "  return trig_reduce_d(ax);\n}\n"},
    // Taylor series on |r| <= pi/4 to r^17 and r^18 (below 2^-60 relative there), with the low part
    // of r folded in through the derivative.
    {"sin_poly_d", "fn sin_poly_d(rh: T, rl: T) -> T {\n  let z = rh * rh;\n  var p = T(2.8114572543455206e-15);\n"
                   "  p = T(-7.647163731819816e-13) + z * p;\n  p = T(1.6059043836821613e-10) + z * p;\n"
                   "  p = T(-2.505210838544172e-08) + z * p;\n  p = T(2.7557319223985893e-06) + z * p;\n"
                   "  p = T(-0.0001984126984126984) + z * p;\n  p = T(0.008333333333333333) + z * p;\n"
                   "  p = T(-0.16666666666666666) + z * p;\n"
                   "  return rh + (rl * (T(1) - T(0.5) * z) + rh * z * p);\n}\n"},
    {"cos_poly_d", "fn cos_poly_d(rh: T, rl: T) -> T {\n  let z = rh * rh;\n  var p = T(-1.5619206968586225e-16);\n"
                   "  p = T(4.779477332387385e-14) + z * p;\n  p = T(-1.1470745597729725e-11) + z * p;\n"
                   "  p = T(2.08767569878681e-09) + z * p;\n  p = T(-2.755731922398589e-07) + z * p;\n"
                   "  p = T(2.48015873015873e-05) + z * p;\n  p = T(-0.001388888888888889) + z * p;\n"
                   "  p = T(0.041666666666666664) + z * p;\n"
                   "  // Everything below 1 summed first, so the result is rounded once (a compensated 1 - z/2\n"
                   "  // is an identity some compilers fold away).\n"
                   "  return T(1) - (T(0.5) * z - (z * z * p - rh * rl));\n}\n"},
    {"sin_d", "fn sin_d(x: T) -> T {\n  if (isnan_(x) || isinf_(x)) { return nan_(); }\n  let ax = abs(x);\n"
              "  if (ax < T(1.4901161193847656e-08)) { return x; }\n  let r = trig_arg_d(ax);\n  let q = u32(r.x);\n"
              "  var v = select(sin_poly_d(r.y, r.z), cos_poly_d(r.y, r.z), (q & 1u) == 1u);\n"
              "  v = select(v, -v, q >= 2u);\n  return select(v, -v, x < T(0));\n}\n"},
    {"cos_d", "fn cos_d(x: T) -> T {\n  if (isnan_(x) || isinf_(x)) { return nan_(); }\n  let ax = abs(x);\n"
              "  if (ax < T(7.450580596923828e-09)) { return T(1); }\n  let r = trig_arg_d(ax);\n  let q = u32(r.x);\n"
              "  let v = select(cos_poly_d(r.y, r.z), sin_poly_d(r.y, r.z), (q & 1u) == 1u);\n"
              "  return select(v, -v, q == 1u || q == 2u);\n}\n"},
    {"tan_d", "fn tan_d(x: T) -> T {\n  if (isnan_(x) || isinf_(x)) { return nan_(); }\n  let ax = abs(x);\n"
              "  if (ax < T(1.4901161193847656e-08)) { return x; }\n  let r = trig_arg_d(ax);\n"
              "  let s = sin_poly_d(r.y, r.z);\n  let c = cos_poly_d(r.y, r.z);\n"
              "  let v = select(s / c, -c / s, (u32(r.x) & 1u) == 1u);\n  return select(v, -v, x < T(0));\n}\n"},
    // a * b as (hi, lo) with hi + lo within 2^-104 of the product, from the 106-bit integer product of
    // the significands in 32-bit limbs. Dekker's float form is not safe here: a driver may fuse the
    // rounded product a * b into the subtraction that recovers its error (NVIDIA's float64 erfc was 176
    // ulp off), and another may fold such error terms away. hi is the product's leading 53 bits
    // (truncated), lo the rest; operands or products near the ends of the exponent range get (a * b, 0).
    {"two_prod_", "fn two_prod_(a: T, b: T) -> vec2<f64> {\n  let ua = bitcast<u64>(a);\n  let ub = bitcast<u64>(b);\n"
                  "  let ea = i32(u32(ua >> 52u) & 0x7ffu);\n  let eb = i32(u32(ub >> 52u) & 0x7ffu);\n"
                  "  if (ea == 0 || eb == 0 || ea == 2047 || eb == 2047 || ea + eb < 1250 || ea + eb > 2800) {\n"
                  "    return vec2<f64>(a * b, T(0));\n  }\n"
                  "  let ma = (ua & 0xffffffffffffflu) | 0x10000000000000lu;\n  let mb = (ub & 0xffffffffffffflu) | 0x10000000000000lu;\n"
                  "  let a1 = ma >> 32u;\n  let a0 = ma & 0xfffffffflu;\n  let b1 = mb >> 32u;\n  let b0 = mb & 0xfffffffflu;\n"
                  "  let mid = a1 * b0 + a0 * b1;\n  let low = a0 * b0;\n  let lo64 = low + (mid << 32u);\n"
                  "  let hi64 = a1 * b1 + (mid >> 32u) + select(0lu, 1lu, lo64 < low);\n"
                  "  // The product has 106 bits (top bit 105) or 105 (top bit 104).\n"
                  "  let wide = (hi64 >> 41u) != 0lu;\n  let shift = select(52u, 53u, wide);\n"
                  "  let top = (hi64 << (64u - shift)) | (lo64 >> shift);\n  let rest = lo64 & ((1lu << shift) - 1lu);\n"
                  "  let e = ea + eb - 1023 + select(0, 1, wide);\n"
                  "  let sign = (ua ^ ub) & 0x8000000000000000lu;\n"
                  "  let hi = bitcast<f64>(sign | (u64(u32(e)) << 52u) | (top & 0xffffffffffffflu));\n"
                  "  let lo = ldexp_d(T(rest), e - 1075 - i32(shift));\n"
                  "  return vec2<f64>(hi, select(lo, -lo, sign != 0lu));\n}\n"},
    // e^(-x^2) with x^2 carried as a pair: x^2 rounded would cost x^2 2^-53 relative (7e-14 at 26).
    {"exp_neg_sq_d", "fn exp_neg_sq_d(x: T) -> T {\n  let h = two_prod_(x, x);\n"
                     "  let e = exp(-h.x);\n  return e - e * h.y;\n}\n"},
    {"erfcx_poly_d", generated::kErfcxPoly},
    // erf's Taylor series for |x| < 0.5, to x^27.
    {"erf_series_d", "fn erf_series_d(x: T) -> T {\n  let z = x * x;\n  var p = T(3.9554295164585257e-13);\n"
                     "  p = T(-5.9477940136376354e-12) + z * p;\n  p = T(8.35070279514724e-11) + z * p;\n"
                     "  p = T(-1.0892221037148573e-09) + z * p;\n  p = T(1.3122532963802806e-08) + z * p;\n"
                     "  p = T(-1.4503852223150468e-07) + z * p;\n  p = T(1.4589169000933706e-06) + z * p;\n"
                     "  p = T(-1.3227513227513228e-05) + z * p;\n  p = T(0.00010683760683760684) + z * p;\n"
                     "  p = T(-0.0007575757575757576) + z * p;\n  p = T(0.004629629629629629) + z * p;\n"
                     "  p = T(-0.023809523809523808) + z * p;\n  p = T(0.1) + z * p;\n"
                     "  p = T(-0.3333333333333333) + z * p;\n  p = T(1) + z * p;\n"
                     "  return T(1.1283791670955126) * x * p;\n}\n"},
    // erfc for a >= 0.5: erfcx from its polynomials up to 4, from the even part of Laplace's
    // continued fraction beyond (12 levels reach full precision there).
    {"erfc_pos_d", "fn erfc_pos_d(a: T) -> T {\n  if (a > T(27.3)) { return T(0); }\n  var g: T;\n"
                   "  if (a <= T(4)) {\n    g = erfcx_poly_d(a);\n  } else {\n    let y = T(2) * a * a;\n"
                   "    var t = y + T(49);\n"
                   "    for (var k = 12; k > 0; k--) { t = y + T(4 * k - 3) - T((2 * k - 1) * 2 * k) / t; }\n"
                   "    g = T(1.1283791670955126) * a / t;\n  }\n  return exp_neg_sq_d(a) * g;\n}\n"},
};

// kFloat helpers that float64 replaces: the float32 forms stop at float32's precision.
const Helper kF64Float[] = {
    {"tan_", "fn tan_(x: T) -> T {\n  return tan(x);\n}\n"},
    {"erf_", "fn erf_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n  let a = abs(x);\n"
             "  if (a < T(0.5)) { return erf_series_d(x); }\n  if (a > T(6)) { return copysign_(T(1), x); }\n"
             "  return copysign_(T(1) - erfc_pos_d(a), x);\n}\n"},
    {"erfc_", "fn erfc_(x: T) -> T {\n  if (isnan_(x)) { return x; }\n  let a = abs(x);\n"
              "  if (a < T(0.5)) { return T(1) - erf_series_d(x); }\n  let r = erfc_pos_d(a);\n"
              "  return select(r, T(2) - r, x < T(0));\n}\n"},
    // Giles' single-precision start, then Newton steps: on erf up to 0.5, beyond on log erfc against
    // 1 - |x| (exact there), which keeps the tail's relative precision and converges from afar.
    {"erfinv_", "fn erfinv_(x: T) -> T {\n  let a = abs(x);\n  if (isnan_(x) || a > T(1)) { return nan_(); }\n"
                "  if (a == T(1)) { return copysign_(inf_(), x); }\n"
                "  var y = erfinv_giles_(a);\n"
                "  if (a <= T(0.5)) {\n"
                "    for (var i = 0; i < 2; i++) { y = y - (erf_(y) - a) / (T(1.1283791670955126) * exp_neg_sq_d(y)); }\n"
                "  } else {\n    let c = T(1) - a;\n"
                "    for (var i = 0; i < 4; i++) {\n      let e = erfc_(y);\n"
                "      y = y + log(e / c) * e / (T(1.1283791670955126) * exp_neg_sq_d(y));\n    }\n  }\n"
                "  return copysign_(y, x);\n}\n"},
};

// The builtins a float64 kernel reaches through kF64Math.
const char* const kF64Builtins[] = {"exp", "exp2", "log", "log2", "sin", "cos", "tan", "ldexp", "trunc", "round"};

// exact_float_math's helpers in this file's Helper form (their text lives as long as the process).
const std::vector<Helper>& exact_pool(bool f64) {
  static const auto make = [](bool wide) {
    std::vector<Helper> helpers;
    for (const ExactHelper& h : exact_float_helpers(wide)) helpers.push_back({h.name.c_str(), h.code.c_str()});
    return helpers;
  };
  static const std::vector<Helper> f32 = make(false), f64_pool = make(true);
  return f64 ? f64_pool : f32;
}

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool calls(const std::string& text, const char* name) {
  const std::string needle = std::string(name) + "(";
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    if (at == 0 || !is_ident(text[at - 1])) return true;
  return false;
}

} // namespace

std::string substitute_type(const std::string& text, const char* type) {
  const bool f64 = std::string(type) == "f64";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const bool starts = i == 0 || !is_ident(text[i - 1]);
    const bool alone = text[i] == 'T' && starts && (i + 1 == text.size() || !is_ident(text[i + 1]));
    if (alone) {
      out += type;
      continue;
    }
    out += text[i];
    if (!f64 || !starts) continue;
    for (const char* name : kF64Builtins) {
      const size_t n = std::char_traits<char>::length(name);
      if (text.compare(i, n, name) == 0 && i + n < text.size() && text[i + n] == '(') {
        out.pop_back();
        out += name;
        out += "_d";
        i += n - 1;
        break;
      }
    }
  }
  return out;
}

std::string math_helpers(const std::string& expression, Value value) {
  std::vector<const Helper*> pool;
  const bool is_float = value == Value::F32 || value == Value::F64;
  if (value == Value::F32)
    for (const auto& h : kF32Bits) pool.push_back(&h);
  if (value == Value::F64)
    for (const auto& h : kF64Bits) pool.push_back(&h);
  if (is_float)
    for (const Helper& h : exact_pool(value == Value::F64)) pool.push_back(&h);
  if (value == Value::I32 || value == Value::I64)
    for (const auto& h : kIntBits) pool.push_back(&h);
  for (const auto& h : kGeneric) pool.push_back(&h);
  if (is_float)
    for (const auto& h : kFloat) {
      const Helper* chosen = &h;
      if (value == Value::F64)
        for (const auto& o : kF64Float)
          if (std::string(o.name) == h.name) chosen = &o;
      pool.push_back(chosen);
    }
  if (value == Value::F64)
    for (const auto& h : kF64Math) pool.push_back(&h);

  // Each helper as this type spells it (f64 renames builtins to the kF64Math helpers).
  const char* type = wgsl_type(value);
  const char* bits = value == Value::I64 ? "64" : "32";
  std::map<const Helper*, std::string> code;
  for (const Helper* h : pool) {
    std::string text = substitute_type(h->code, type);
    for (size_t at = text.find("BITS"); at != std::string::npos; at = text.find("BITS", at)) text.replace(at, 4, bits);
    code.emplace(h, std::move(text));
  }
  // Grow the set of reached helpers to a fixed point, then emit them in pool order (callees are
  // listed before callers or WGSL resolves them anyway: module-scope declarations are order-free).
  std::set<const Helper*> reached;
  std::string scanned = expression;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Helper* h : pool) {
      if (!reached.count(h) && calls(scanned, h->name)) {
        reached.insert(h);
        scanned += code[h];
        grew = true;
      }
    }
  }
  std::string out;
  for (const Helper* h : pool)
    if (reached.count(h)) out += code[h];
  return out;
}

} // namespace torch_dml::kernels
