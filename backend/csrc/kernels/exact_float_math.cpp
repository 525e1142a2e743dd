#include "kernels/exact_float_math.h"

#include "kernels/generated/wgsl_math.h"

#include <string>
#include <vector>

namespace torch_dml::kernels {
namespace {

// wgsl/math/exact.wgsl is written once for both float widths; its layout tokens are replaced per width.
// Everything there is integer arithmetic on the bit patterns: what Vulkan leaves to the driver for
// floats (division to 2.5 ulp, fused or unfused a * b + c, subnormals flushed) cannot change a result.
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
std::string fill_layout(const std::string& in, const Layout& layout) {
  std::string out;
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
  std::vector<ExactHelper> helpers;
  for (const wgsl::math::Helper& h : wgsl::math::exact)
    helpers.push_back({std::string(h.name), fill_layout(std::string(h.code), layout)});
  return helpers;
}

} // namespace

const std::vector<ExactHelper>& exact_float_helpers(bool f64) {
  static const std::vector<ExactHelper> f32 = build(kF32Layout);
  static const std::vector<ExactHelper> f64_helpers = build(kF64Layout);
  return f64 ? f64_helpers : f32;
}

} // namespace torch_dml::kernels
