// Tensors as 32-bit words, for kernels that move bits without knowing the dtype (tril/triu).
#pragma once

#include <ATen/core/Tensor.h>

#include "kernels/tensor_ref.h"

namespace torch_dml::aten {

// Whether the tensor is contiguous and its first byte starts a word (a fresh allocation always does).
bool word_addressable(const at::Tensor& tensor);

// The tensor addressed in words: dtype kInt, element_offset counted in 32-bit words.
kernels::DeviceTensorRef device_words(const at::Tensor& tensor);

} // namespace torch_dml::aten
