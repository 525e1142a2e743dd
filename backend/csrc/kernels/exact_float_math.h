// WGSL helpers that give float results exactly or correctly rounded by integer arithmetic on the bit
// patterns, so that no driver latitude (division precision, contraction, subnormal flushing) shows:
// fmod_, div_rn_ and the bit tests they use. The elementwise helper pool takes them for f32 and f64.
#pragma once

#include <string>
#include <vector>

namespace torch_dml::kernels {

struct ExactHelper {
  std::string name;
  std::string code; // `T` is the computation type, still to be substituted
};

const std::vector<ExactHelper>& exact_float_helpers(bool f64);

} // namespace torch_dml::kernels
