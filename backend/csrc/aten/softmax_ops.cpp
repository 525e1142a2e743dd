// softmax / log_softmax and their backward passes on the row kernels. A contiguous input reduced over an
// earlier dim is read in place a column at a time; otherwise the softmax dim is moved last and made
// contiguous (a native copy) so each row is a contiguous run. A contiguous output is written by the
// kernel directly.
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "kernels/softmax_kernel.h"

namespace torch_dml::aten {
namespace {

using kernels::SoftmaxKind;

// A contiguous operand reduced over a dim that is not the last (with elements after it) is read where
// it lies, a thread per column; otherwise the dim is moved last and made contiguous.
bool reads_columns(const at::Tensor& input, const std::optional<at::Tensor>& grad, int64_t wrapped) {
  return input.dim() > 1 && wrapped < input.dim() - 1 && input.is_contiguous() && (!grad || grad->is_contiguous()) &&
         c10::multiply_integers(input.sizes().slice(wrapped + 1)) > 1;
}

// out (any layout, any float dtype) <- kind applied along `dim` of input (and grad for backward).
void run(SoftmaxKind kind, const at::Tensor& input, const std::optional<at::Tensor>& grad, int64_t dim,
         const at::Tensor& out) {
  c10::DeviceGuard guard(input.device());
  const int64_t wrapped = at::maybe_wrap_dim(dim, std::max<int64_t>(input.dim(), 1));
  const bool columns = reads_columns(input, grad, wrapped);
  auto moved = [&](const at::Tensor& t) {
    if (columns) return t;
    return t.dim() == 0 ? t.reshape({1}) : t.movedim(wrapped, -1).contiguous();
  };
  const at::Tensor x = moved(input);
  const std::optional<at::Tensor> g = grad ? std::optional<at::Tensor>(moved(*grad)) : std::nullopt;
  at::native::resize_output(out, input.sizes());
  if (input.numel() == 0) return;
  kernels::SoftmaxProblem problem;
  problem.kind = kind;
  problem.length = static_cast<uint64_t>(columns ? x.size(wrapped) : x.size(-1));
  problem.inner = columns ? static_cast<uint64_t>(c10::multiply_integers(x.sizes().slice(wrapped + 1))) : 1;
  problem.rows = static_cast<uint64_t>(x.numel()) / (problem.length * problem.inner);
  problem.input = device_ref(x);
  if (g) problem.grad = device_ref(*g);
  runtime::DeviceContext& context = context_of(input);
  // The kernel writes `out` itself when it is laid out as the kernel reads x (contiguous) and the kernel
  // can store its dtype; otherwise float32 (float64 for float64) that a copy converts and lays out.
  const bool in_place = out.is_contiguous() && (columns || input.dim() == 0 || wrapped == input.dim() - 1);
  at::Tensor result = in_place ? out : at::empty(x.sizes(), x.options().dtype(out.scalar_type()));
  problem.out = device_ref(result);
  if (!kernels::softmax_stores(context, problem)) {
    result = at::empty(x.sizes(), x.options().dtype(x.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat));
    problem.out = device_ref(result);
  }
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::softmax(context, problem);
  }
  if (result.is_same(out)) return;
  if (columns) out.copy_(result);
  else out.copy_(input.dim() == 0 ? result.reshape({}) : result.movedim(-1, wrapped));
}

bool fits(const at::Tensor& t) {
  runtime::DeviceContext& context = context_of(t);
  if (!kernels::softmax_supports(context, t.scalar_type())) return false;
  const uint64_t itemsize = t.scalar_type() == c10::kDouble ? 8 : 4;
  return static_cast<uint64_t>(t.numel()) * itemsize <= context.limits().maxStorageBufferBindingSize;
}

// The fallback rule (dtypes, `fits`, matching gradient dtype) is checked by the generated kernels.
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool /*half_to_float*/, at::Tensor& out) {
  run(SoftmaxKind::Softmax, self, std::nullopt, dim, out);
  return out;
}

at::Tensor& log_softmax_out(const at::Tensor& self, int64_t dim, bool /*half_to_float*/, at::Tensor& out) {
  run(SoftmaxKind::LogSoftmax, self, std::nullopt, dim, out);
  return out;
}

at::Tensor& softmax_backward_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                 c10::ScalarType /*input_dtype*/, at::Tensor& grad_input) {
  run(SoftmaxKind::SoftmaxBackward, output, grad_output, dim, grad_input);
  return grad_input;
}

at::Tensor& log_softmax_backward_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                     c10::ScalarType /*input_dtype*/, at::Tensor& out) {
  run(SoftmaxKind::LogSoftmaxBackward, output, grad_output, dim, out);
  return out;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/softmax_ops.inc"

} // namespace
} // namespace torch_dml::aten
