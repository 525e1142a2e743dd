// native_layer_norm and its backward on the layer-norm row kernels (float32 arithmetic, float64 for
// float64; output in the input's dtype where the kernel can store it); the weight and bias gradients are column sums through
// the native reduction.
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/native_layer_norm_ops.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "kernels/layer_norm_kernel.h"

namespace torch_dml::aten {
namespace {

using Triple = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// The kernels' arithmetic dtype, which their statistics and workgroup-per-row outputs hold.
at::TensorOptions acc_options(const at::Tensor& input) {
  return input.options().dtype(input.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat);
}

bool same_dtype(const at::Tensor& input, const std::optional<at::Tensor>& other) {
  return !other || !other->defined() || other->scalar_type() == input.scalar_type();
}

std::vector<int64_t> stat_shape(const at::Tensor& input, size_t normalized_dims) {
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  for (size_t i = shape.size() - normalized_dims; i < shape.size(); ++i) shape[i] = 1;
  return shape;
}

// What the kernels take (native.yaml's rule): a dtype and size they have a plan for, affine parameters
// of the input's dtype, and a non-empty normalized shape the input ends with.
bool kernel_takes(const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                  const std::optional<at::Tensor>& bias = std::nullopt) {
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  return kernels::layer_norm_unsupported_reason(context_of(input), input.scalar_type(), input.numel()).empty() &&
      same_dtype(input, weight) && same_dtype(input, bias) && axis >= 0 &&
      input.sizes().slice(axis).equals(normalized_shape) && c10::multiply_integers(normalized_shape) > 0;
}

Triple layer_norm_forward(const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                  const std::optional<at::Tensor>& bias, double eps) {
  runtime::DeviceContext& context = context_of(input);
  c10::DeviceGuard guard(input.device());
  const int64_t length = c10::multiply_integers(normalized_shape);
  const int64_t rows = input.numel() / length;
  if (rows == 0) {
    const auto stats = stat_shape(input, normalized_shape.size());
    return {at::empty(input.sizes(), input.options()), at::empty(stats, input.options()), at::empty(stats, input.options())};
  }
  const at::Tensor x = input.contiguous();
  const at::TensorOptions acc = acc_options(input);
  at::Tensor out = at::empty({rows, length}, input.options()), mean = at::empty({rows}, acc), rstd = at::empty({rows}, acc);
  kernels::LayerNormForward problem;
  problem.rows = static_cast<uint64_t>(rows);
  problem.length = static_cast<uint64_t>(length);
  problem.eps = eps;
  problem.input = device_ref(x);
  at::Tensor w, b;
  if (weight && weight->defined()) problem.weight = device_ref(w = weight->contiguous());
  if (bias && bias->defined()) problem.bias = device_ref(b = bias->contiguous());
  problem.out = device_ref(out);
  problem.mean = device_ref(mean);
  problem.rstd = device_ref(rstd);
  // The kernel writes the input's dtype where it can, else float32 that a copy converts.
  if (!kernels::layer_norm_forward_stores(context, problem)) problem.out = device_ref(out = at::empty({rows, length}, acc));
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::layer_norm_forward(context, problem);
  }
  const auto stats = stat_shape(input, normalized_shape.size());
  return {out.view(input.sizes()).to(input.scalar_type()), mean.view(stats).to(input.scalar_type()),
          rstd.view(stats).to(input.scalar_type())};
}

Triple layer_norm_backward(const at::Tensor& grad_out, const at::Tensor& input, at::IntArrayRef normalized_shape,
                           const at::Tensor& mean, const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                           const std::optional<at::Tensor>& bias, std::array<bool, 3> output_mask) {
  runtime::DeviceContext& context = context_of(input);
  c10::DeviceGuard guard(input.device());
  const int64_t length = c10::multiply_integers(normalized_shape);
  const int64_t rows = input.numel() / length;
  if (rows == 0) { // no rows: the parameter gradients are empty sums
    const bool has_bias = bias && bias->defined();
    return {output_mask[0] ? at::empty(input.sizes(), input.options()) : at::Tensor(),
            output_mask[1] && weight && weight->defined() ? at::zeros_like(*weight) : at::Tensor(),
            output_mask[2] && has_bias ? at::zeros_like(*bias) : at::Tensor()};
  }
  const at::TensorOptions acc = acc_options(input);
  const at::Tensor g = grad_out.contiguous(), x = input.contiguous();
  const at::Tensor mean_f = mean.to(acc.dtype()).contiguous(), rstd_f = rstd.to(acc.dtype()).contiguous();
  at::Tensor grad_input = at::empty({rows, length}, input.options()), weighted;
  kernels::LayerNormBackward problem;
  problem.rows = static_cast<uint64_t>(rows);
  problem.length = static_cast<uint64_t>(length);
  problem.grad = device_ref(g);
  problem.input = device_ref(x);
  problem.mean = device_ref(mean_f);
  problem.rstd = device_ref(rstd_f);
  at::Tensor w;
  const bool has_weight = weight && weight->defined();
  if (has_weight) problem.weight = device_ref(w = weight->contiguous());
  const bool want_weight_grad = output_mask[1] && has_weight;
  problem.grad_input = device_ref(grad_input);
  if (want_weight_grad) problem.weighted = device_ref(weighted = at::empty({rows, length}, acc));
  // The kernel writes the input's dtype (and `weighted` only when wanted) where it can, else float32.
  if (!kernels::layer_norm_backward_stores(context, problem)) {
    problem.grad_input = device_ref(grad_input = at::empty({rows, length}, acc));
    if (!weighted.defined()) weighted = at::empty({rows, length}, acc);
    problem.weighted = device_ref(weighted);
  }
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::layer_norm_backward(context, problem);
  }
  at::Tensor dx, dw, db;
  if (output_mask[0]) dx = grad_input.view(input.sizes()).to(input.scalar_type());
  if (want_weight_grad) dw = at::sum(weighted, {0}, false, weight->scalar_type()).view(weight->sizes());
  if (output_mask[2] && bias && bias->defined())
    db = at::sum(g.view({rows, length}), {0}, false, bias->scalar_type()).view(bias->sizes());
  return {dx, dw, db};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/layer_norm_ops.inc"

} // namespace
} // namespace torch_dml::aten
