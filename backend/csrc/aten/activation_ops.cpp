// Activations whose schemas the generated elementwise registrations do not describe: log_sigmoid's
// forward returns a buffer beside its output (the CPU's backward reads it; ours, like CUDA's, returns
// an empty one and recomputes from the input), glu works on two halves of its input, and prelu's
// backward has two outputs. Each is one or two launches of a row of backend/ops.yaml, in the CPU's
// order of operations; a dtype the rows do not take goes to the counted CPU fallback (`tries`).
#include <ATen/TensorIterator.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_prelu_kernel_backward_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/glu_backward_ops.h>
#include <ATen/ops/glu_ops.h>
#include <ATen/ops/log_sigmoid_forward_ops.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/common.h"
#include "aten/elementwise.h"
#include "aten/fallback.h"
#include "kernels/generated/elementwise_ops.h"

namespace torch_dml::aten {
namespace {

namespace ops = kernels::ops;
using elementwise::run;
using elementwise::takes;

// ---- log_sigmoid ---------------------------------------------------------------------------------

bool logsigmoid_out(const at::Tensor& self, const at::Tensor& output, const at::Tensor& /*buffer*/) {
  if (!takes(self)) return false;
  at::TensorIterator iter;
  iter.build_unary_op(output, self);
  return run(ops::log_sigmoid, iter, {});
}

std::optional<std::tuple<at::Tensor, at::Tensor>> logsigmoid(const at::Tensor& self) {
  const at::Tensor output = at::empty({0}, self.options());
  if (!logsigmoid_out(self, output, at::Tensor())) return std::nullopt;
  return std::make_tuple(output, at::empty({0}, self.options()));
}

// ---- glu -----------------------------------------------------------------------------------------

// The dimension glu halves, after PyTorch's checks.
int64_t halved_dim(const at::Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(wrapped) % 2 == 0, "Halving dimension must be even, but dimension ", wrapped, " is size ",
              self.size(wrapped));
  return wrapped;
}

bool gated_linear_out(const at::Tensor& self, int64_t dim, const at::Tensor& out) {
  if (!takes(self)) return false;
  const int64_t d = halved_dim(self, dim);
  const int64_t half = self.size(d) / 2;
  at::TensorIterator iter;
  iter.build_binary_op(out, self.narrow(d, 0, half), self.narrow(d, half, half));
  return run(ops::glu, iter, {});
}

std::optional<at::Tensor> gated_linear(const at::Tensor& self, int64_t dim) {
  const at::Tensor out = at::empty({0}, self.options());
  if (!gated_linear_out(self, dim, out)) return std::nullopt;
  return out;
}

// The first half's gradient sigmoid(b) * g, the second's (1 - sigmoid(b)) * sigmoid(b) * a * g, each
// written into its half of grad_input.
bool gated_linear_backward_out(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim,
                      const at::Tensor& grad_input) {
  if (!takes(grad_output, self) || grad_output.scalar_type() != self.scalar_type()) return false;
  const int64_t d = halved_dim(self, dim);
  const int64_t half = self.size(d) / 2;
  at::native::resize_output(grad_input, self.sizes());
  const at::Tensor first = self.narrow(d, 0, half), second = self.narrow(d, half, half);
  at::Tensor grad_first = grad_input.narrow(d, 0, half), grad_second = grad_input.narrow(d, half, half);
  at::TensorIterator second_iter = at::TensorIteratorConfig()
                                       .add_output(grad_second)
                                       .add_const_input(first)
                                       .add_const_input(second)
                                       .add_const_input(grad_output)
                                       .resize_outputs(false)
                                       .build();
  if (!run(ops::glu_backward_second, second_iter, {})) return false;
  at::TensorIterator first_iter = at::TensorIteratorConfig()
                                      .add_output(grad_first)
                                      .add_const_input(second)
                                      .add_const_input(grad_output)
                                      .resize_outputs(false)
                                      .build();
  TORCH_INTERNAL_ASSERT(run(ops::glu_backward_first, first_iter, {}));
  return true;
}

std::optional<at::Tensor> gated_linear_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim) {
  const at::Tensor grad_input = at::empty({0}, self.options());
  if (!gated_linear_backward_out(grad_output, self, dim, grad_input)) return std::nullopt;
  return grad_input;
}

// ---- prelu ---------------------------------------------------------------------------------------

// grad_input and the unreduced grad_weight, both of the broadcast shape (autograd sums grad_weight to
// the weight's shape, as after the CPU's kernel).
std::optional<std::tuple<at::Tensor, at::Tensor>> prelu_backward(const at::Tensor& grad_output,
                                                                 const at::Tensor& self, const at::Tensor& weight) {
  if (!takes(grad_output, self, weight)) return std::nullopt;
  at::TensorIterator input_iter;
  input_iter.build_ternary_op(at::Tensor(), self, weight, grad_output);
  if (!run(ops::prelu_backward_input, input_iter, {})) return std::nullopt;
  at::TensorIterator weight_iter;
  weight_iter.build_ternary_op(at::Tensor(), self, weight, grad_output);
  TORCH_INTERNAL_ASSERT(run(ops::prelu_backward_weight, weight_iter, {}));
  return std::make_tuple(input_iter.output(), weight_iter.output());
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/activation_ops.inc"

} // namespace
} // namespace torch_dml::aten
