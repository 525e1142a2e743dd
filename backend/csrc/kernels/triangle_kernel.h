// tril / triu on 32-bit words (any dtype): dst = the lower or upper triangle of src, for contiguous
// batches of matrices that start on a word boundary; a tensor past one storage binding goes a slice
// of words per dispatch.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

struct TriangleProblem {
  uint64_t elements = 0; // batch * rows * cols
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t diagonal = 0;
  bool lower = true;     // tril; triu when false
  size_t itemsize = 4;   // bytes per element of the dtype
  DeviceTensorRef src;   // element_offset counted in 32-bit words
  DeviceTensorRef dst;   // element_offset counted in 32-bit words; may be src itself
};

std::string triangle_unsupported_reason(runtime::DeviceContext& context, const TriangleProblem& problem);
void triangle(runtime::DeviceContext& context, const TriangleProblem& problem);

} // namespace torch_dml::kernels
