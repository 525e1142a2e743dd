// What the 2-D pooling ops (pooling_ops.cpp: max_pool2d; avg_pool_ops.cpp: the average pools) do alike
// with their tensors around the pooling kernels (kernels/pool2d_kernel.h).
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_dml::aten {

// A 3-D (C, H, W) image as a batch of one.
inline at::Tensor as4d(const at::Tensor& t) {
  return t.dim() == 3 ? t.unsqueeze(0) : t;
}

// The computation type's tensor a kernel writes: `target` itself where it already is one (float32 or
// float64), else a float32 tensor of its sizes and layout that the caller rounds into it.
at::Tensor written_form(const at::Tensor& target);

// `out` resized as the CPU's structured kernels do: to `sizes`, in the input's layout when resized.
void resize_like_input(const at::Tensor& out, at::IntArrayRef sizes, const at::Tensor& self);

} // namespace torch_dml::aten
