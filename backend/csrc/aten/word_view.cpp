#include "aten/word_view.h"

#include "aten/common.h"

namespace torch_dml::aten {

bool word_addressable(const at::Tensor& tensor) {
  return tensor.is_contiguous() && device_ref(tensor).element_offset * tensor.element_size() % 4 == 0;
}

kernels::DeviceTensorRef device_words(const at::Tensor& tensor) {
  kernels::DeviceTensorRef ref = device_ref(tensor);
  const uint64_t byte_offset = ref.element_offset * tensor.element_size();
  TORCH_INTERNAL_ASSERT(byte_offset % 4 == 0, "torch_dml: a word-addressed tensor must start on a word");
  ref.element_offset = byte_offset / 4;
  ref.dtype = c10::kInt;
  return ref;
}

} // namespace torch_dml::aten
