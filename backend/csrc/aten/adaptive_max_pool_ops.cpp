// adaptive_max_pool2d (functional and out=) and its backward for float dtypes. The forward is one
// kernel (kernels/adaptive_max_pool_kernel: each output scans its window) plus a conversion to a
// 16-bit dtype; the backward is one kernel too (each input element gathers the gradients of the
// outputs that saved it, in the CPU's order), where the kernel declines a scatter_add over the
// flattened planes. Inputs the forward cannot take (integer dtypes, a dimension past 32-bit window
// arithmetic) go to the counted CPU fallback.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/adaptive_max_pool2d_backward_ops.h>
#include <ATen/ops/adaptive_max_pool2d_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/word_view.h"
#include "kernels/adaptive_max_pool_kernel.h"

namespace torch_dml::aten {
namespace {

void check_input(const at::Tensor& self, at::IntArrayRef output_size) {
  TORCH_CHECK(output_size.size() == 2, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4,
              "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: ", self.sizes());
  for (int64_t d = 1; d < self.dim(); ++d)
    TORCH_CHECK(self.size(d) > 0, "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ", self.sizes(), " with dimension ", d, " being empty");
}

// The sizes of the problem for a 4-D `input` (operands are set by the caller).
kernels::AdaptiveMaxPoolProblem problem_for(const at::Tensor& input, at::IntArrayRef output_size) {
  kernels::AdaptiveMaxPoolProblem a;
  a.planes = static_cast<uint64_t>(input.size(0) * input.size(1));
  a.in_h = static_cast<uint64_t>(input.size(2));
  a.in_w = static_cast<uint64_t>(input.size(3));
  a.out_h = static_cast<uint64_t>(output_size[0]);
  a.out_w = static_cast<uint64_t>(output_size[1]);
  return a;
}

// out, indices <- the pool; false, with nothing written, where the kernel does not take the input
// (native.yaml: `tries`).
bool pool_out(const at::Tensor& self, at::IntArrayRef output_size, const at::Tensor& out, const at::Tensor& indices) {
  check_input(self, output_size);
  c10::DeviceGuard guard(self.device());
  if (self.numel() == 0) {  // an empty batch: no buffer to bind, nothing to scan
    std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 2);
    sizes.insert(sizes.end(), {output_size[0], output_size[1]});
    assign_out(out, at::empty(sizes, self.options()));
    assign_out(indices, at::empty(sizes, self.options().dtype(c10::kLong)));
    return true;
  }
  const bool batched = self.dim() == 4;
  const at::Tensor input = (batched ? self : self.unsqueeze(0)).contiguous();
  kernels::AdaptiveMaxPoolProblem a = problem_for(input, output_size);
  runtime::DeviceContext& context = context_of(self);
  a.src = device_ref(input);
  if (!kernels::adaptive_max_pool_unsupported_reason(context, a).empty()) return false;
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 2);
  sizes.push_back(output_size[0]);
  sizes.push_back(output_size[1]);
  const c10::ScalarType real = self.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  const at::Tensor values = at::empty(sizes, self.options().dtype(real));
  const at::Tensor positions = at::empty(sizes, self.options().dtype(c10::kLong));
  a.out = device_ref(values);
  a.indices = device_words(positions);
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::adaptive_max_pool(context, a);
  }
  assign_out(out, values.scalar_type() == self.scalar_type() ? values : values.to(self.scalar_type()));
  assign_out(indices, positions);
  return true;
}

std::optional<std::tuple<at::Tensor, at::Tensor>> pool(const at::Tensor& self, at::IntArrayRef output_size) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({0}, self.options());
  at::Tensor indices = at::empty({0}, self.options().dtype(c10::kLong));
  if (!pool_out(self, output_size, out, indices)) return std::nullopt;
  return std::make_tuple(out, indices);
}

// The input's gradient in self's dtype, or nullopt where the gather kernel declines.
std::optional<at::Tensor> gathered(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& indices) {
  if (self.numel() == 0) return at::empty(self.sizes(), grad_output.options());  // nothing to bind or gather
  kernels::AdaptiveMaxPoolProblem a;
  a.backward = true;
  a.planes = static_cast<uint64_t>(self.numel() / (self.size(-1) * self.size(-2)));
  a.in_h = static_cast<uint64_t>(self.size(-2)), a.in_w = static_cast<uint64_t>(self.size(-1));
  a.out_h = static_cast<uint64_t>(grad_output.size(-2)), a.out_w = static_cast<uint64_t>(grad_output.size(-1));
  const at::Tensor grad = grad_output.contiguous(), saved = indices.contiguous();
  const c10::ScalarType real = self.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  const at::Tensor sums = at::empty(self.sizes(), grad_output.options().dtype(real));
  a.src = device_ref(grad);
  a.out = device_ref(sums);
  a.indices = device_words(saved);
  runtime::DeviceContext& context = context_of(self);
  if (!kernels::adaptive_max_pool_unsupported_reason(context, a).empty()) return std::nullopt;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::adaptive_max_pool(context, a);
  }
  return sums.to(self.scalar_type());
}

at::Tensor pool_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& indices) {
  TORCH_CHECK(grad_output.dim() == self.dim() && indices.sizes() == grad_output.sizes(),
              "adaptive_max_pool2d_backward(): grad_output, indices and self do not match: ", grad_output.sizes(),
              ", ", indices.sizes(), ", ", self.sizes());
  c10::DeviceGuard guard(self.device());
  if (auto result = gathered(grad_output, self, indices)) return *result;
  const int64_t planes = self.numel() / (self.size(-1) * self.size(-2));
  const at::Tensor flat = at::zeros({planes, self.size(-2) * self.size(-1)}, grad_output.options());
  flat.scatter_add_(1, indices.reshape({planes, -1}), grad_output.reshape({planes, -1}));
  return flat.view(self.sizes());
}

at::Tensor& pool_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& indices,
                              at::Tensor& grad_input) {
  assign_out(grad_input, pool_backward(grad_output, self, indices));
  return grad_input;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/adaptive_max_pool_ops.inc"

} // namespace
} // namespace torch_dml::aten
