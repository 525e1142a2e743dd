#include "kernels/image_operand.h"

#include <algorithm>

namespace torch_dml::kernels {

uint64_t image_span(const ImageOperand& op, const uint64_t (&sizes)[4]) {
  uint64_t last = 0;
  for (int d = 0; d < 4; ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * static_cast<uint64_t>(op.strides[d]);
  }
  return last + 1;
}

bool image_strides_fit(const ImageOperand& op) {
  return std::all_of(op.strides, op.strides + 4, [](int64_t s) { return s >= 0 && s <= 0xFFFFFFFFll; });
}

void put_image_strides(const ImageOperand& op, uint32_t* out) {
  for (int d = 0; d < 4; ++d) out[d] = static_cast<uint32_t>(op.strides[d]);
}

} // namespace torch_dml::kernels
