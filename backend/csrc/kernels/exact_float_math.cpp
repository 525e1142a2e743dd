#include "kernels/exact_float_math.h"

#include <string>
#include <vector>

namespace torch_dml::kernels {
namespace {

// Written once for both float widths; the layout tokens below are replaced per width. Everything here
// is integer arithmetic on the bit patterns: what Vulkan leaves to the driver for floats (division to
// 2.5 ulp, fused or unfused a * b + c, subnormals flushed) cannot change a result.
const char* const kExactHelpers[] = {
    // |x| (as bits) = m 2^(e - BIAS - MANT), m with its hidden bit; subnormals have e = 1, no hidden bit.
    "struct Parts_ { m: UT, e: i32 }\n"
    "fn parts_(a: UT) -> Parts_ {\n  let e = i32(u32(a >> MANT));\n"
    "  if (e == 0) { return Parts_(a, 1); }\n  return Parts_((a & MANT_MASK) | HIDDEN, e);\n}\n",
    // The float of sign | m 2^(e - BIAS - MANT) for m < 2 HIDDEN, exact (no rounding happens).
    "fn pack_exact_(sign: UT, m: UT, e: i32) -> T {\n  var r = m;\n  var k = e;\n"
    "  while (r != UT(0) && r < HIDDEN && k > 1) {\n    r = r << 1u;\n    k = k - 1;\n  }\n"
    "  if (r < HIDDEN) { return bitcast<T>(sign | r); }\n"
    "  return bitcast<T>(sign | (UT(u32(k)) << MANT) | (r & MANT_MASK));\n}\n",
    // sign | q 2^(e - BIAS - MANT - 1) rounded to nearest even, q of MANT + 2 bits (the last a guard bit),
    // `sticky` when nonzero bits lie beyond q; overflow gives infinity, underflow subnormals or zero.
    "fn round_pack_(sign: UT, q: UT, e: i32, sticky: bool) -> T {\n"
    "  if (e >= EMAX) { return bitcast<T>(sign | INF_BITS); }\n"
    "  var m = q >> 1u;\n  var lost = q & UT(1);\n  var half = UT(1);\n  var k = e;\n"
    "  if (e < 1) {\n    let sh = 2 - e;\n    if (sh > MANTI + 3) { return bitcast<T>(sign); }\n"
    "    m = q >> u32(sh);\n    lost = q & ((UT(1) << u32(sh)) - UT(1));\n    half = UT(1) << u32(sh - 1);\n    k = 0;\n  }\n"
    "  if (lost > half || (lost == half && (sticky || (m & UT(1)) != UT(0)))) { m = m + UT(1); }\n"
    "  if (k == 0) { return bitcast<T>(sign | m); }\n"
    "  if (m >= (HIDDEN << 1u)) {\n    m = m >> 1u;\n    k = k + 1;\n"
    "    if (k >= EMAX) { return bitcast<T>(sign | INF_BITS); }\n  }\n"
    "  return bitcast<T>(sign | (UT(u32(k)) << MANT) | (m & MANT_MASK));\n}\n",
    // Zero and negative tests from the bits: a driver that flushes subnormals compares them equal to 0.
    "fn is_zero_(x: T) -> bool { return (bitcast<UT>(x) & ABS_MASK) == UT(0); }\n",
    "fn is_neg_(x: T) -> bool { return (bitcast<UT>(x) & SIGN_BIT) != UT(0) && !is_zero_(x); }\n",
    // C's fmod, exact: the integer remainder of the significands, shifted STEP bits at a time (each
    // step's dividend stays below the unsigned width). WGSL's x % y is x - y * trunc(x / y), which
    // loses the quotient's bits and depends on the division's precision.
    "fn fmod_(x: T, y: T) -> T {\n  let ax = bitcast<UT>(x) & ABS_MASK;\n  let ay = bitcast<UT>(y) & ABS_MASK;\n"
    "  if (ax >= INF_BITS || ay > INF_BITS || ay == UT(0)) { return nan_(); }\n"
    "  if (ay == INF_BITS || ax < ay) { return x; }\n  let px = parts_(ax);\n  let py = parts_(ay);\n"
    "  var r = px.m % py.m;\n  var gap = px.e - py.e;\n"
    "  while (gap > 0) {\n    let s = min(gap, STEP);\n    r = (r << u32(s)) % py.m;\n    gap = gap - s;\n  }\n"
    "  return pack_exact_(bitcast<UT>(x) & SIGN_BIT, r, py.e);\n}\n",
    // a / b correctly rounded (IEEE), by long division of the significands: WGSL allows 2.5 ulp for
    // x / y and NVIDIA uses that latitude, while floor division must match the CPU to the bit.
    "fn div_rn_(a: T, b: T) -> T {\n  let ua = bitcast<UT>(a);\n  let ub = bitcast<UT>(b);\n"
    "  let aa = ua & ABS_MASK;\n  let ab = ub & ABS_MASK;\n  let sign = (ua ^ ub) & SIGN_BIT;\n"
    "  if (aa > INF_BITS || ab > INF_BITS || (aa == ab && (aa == UT(0) || aa == INF_BITS))) { return nan_(); }\n"
    "  if (aa == INF_BITS || ab == UT(0)) { return bitcast<T>(sign | INF_BITS); }\n"
    "  if (aa == UT(0) || ab == INF_BITS) { return bitcast<T>(sign); }\n"
    "  var pa = parts_(aa);\n  var pb = parts_(ab);\n"
    "  while (pa.m < HIDDEN) {\n    pa.m = pa.m << 1u;\n    pa.e = pa.e - 1;\n  }\n"
    "  while (pb.m < HIDDEN) {\n    pb.m = pb.m << 1u;\n    pb.e = pb.e - 1;\n  }\n"
    "  var e = pa.e - pb.e + BIAS;\n  var r = pa.m;\n  if (r < pb.m) {\n    r = r << 1u;\n    e = e - 1;\n  }\n"
    "  var q = UT(0);\n"
    "  for (var i = 0; i < MANTI + 2; i++) {\n    q = q << 1u;\n"
    "    if (r >= pb.m) {\n      r = r - pb.m;\n      q = q | UT(1);\n    }\n    r = r << 1u;\n  }\n"
    "  return round_pack_(sign, q, e, r != UT(0));\n}\n",
};

struct Layout {
  const char* tokens[11][2];
};

const Layout kF32Layout = {{{"UT", "u32"}, {"MANT_MASK", "0x7fffffu"}, {"MANTI", "23"}, {"MANT", "23u"},
                            {"HIDDEN", "0x800000u"}, {"INF_BITS", "0x7f800000u"}, {"ABS_MASK", "0x7fffffffu"},
                            {"SIGN_BIT", "0x80000000u"}, {"EMAX", "255"}, {"BIAS", "127"}, {"STEP", "8"}}};
const Layout kF64Layout = {{{"UT", "u64"}, {"MANT_MASK", "0xffffffffffffflu"}, {"MANTI", "52"}, {"MANT", "52u"},
                            {"HIDDEN", "0x10000000000000lu"}, {"INF_BITS", "0x7ff0000000000000lu"},
                            {"ABS_MASK", "0x7ffffffffffffffflu"}, {"SIGN_BIT", "0x8000000000000000lu"},
                            {"EMAX", "2047"}, {"BIAS", "1023"}, {"STEP", "11"}}};

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Replaces whole-identifier tokens only (MANT inside MANT_MASK or MANTI is a different token).
std::string fill_layout(const char* text, const Layout& layout) {
  std::string in(text), out;
  for (size_t i = 0; i < in.size();) {
    if (ident_char(in[i]) && (i == 0 || !ident_char(in[i - 1]))) {
      size_t end = i;
      while (end < in.size() && ident_char(in[end])) ++end;
      const std::string word = in.substr(i, end - i);
      const char* replacement = nullptr;
      for (const auto& token : layout.tokens)
        if (word == token[0]) replacement = token[1];
      out += replacement ? replacement : word;
      i = end;
      continue;
    }
    out += in[i++];
  }
  return out;
}

std::vector<ExactHelper> build(const Layout& layout) {
  static const char* const kNames[] = {"parts_", "pack_exact_", "round_pack_", "is_zero_", "is_neg_", "fmod_", "div_rn_"};
  std::vector<ExactHelper> helpers;
  for (size_t k = 0; k < sizeof(kExactHelpers) / sizeof(kExactHelpers[0]); ++k)
    helpers.push_back({kNames[k], fill_layout(kExactHelpers[k], layout)});
  return helpers;
}

} // namespace

const std::vector<ExactHelper>& exact_float_helpers(bool f64) {
  static const std::vector<ExactHelper> f32 = build(kF32Layout);
  static const std::vector<ExactHelper> f64_helpers = build(kF64Layout);
  return f64 ? f64_helpers : f32;
}

} // namespace torch_dml::kernels
