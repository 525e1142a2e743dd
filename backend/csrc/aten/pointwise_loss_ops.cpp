// smooth_l1_loss, huber_loss and binary_cross_entropy: the elementwise loss is a row of backend/ops.yaml
// (in the CPU's order of operations), then the weight and the reduction's mean or sum on the device.
// smooth_l1's and huber's backward passes are rows too, registered from ops.yaml. A dtype the rows do not
// take goes to the counted CPU fallback (`tries`).
#include <ATen/TensorIterator.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/binary_cross_entropy_backward_ops.h>
#include <ATen/ops/binary_cross_entropy_ops.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/huber_loss_ops.h>
#include <ATen/ops/smooth_l1_loss_ops.h>
#include <torch/library.h>

#include <optional>

#include "aten/common.h"
#include "aten/elementwise.h"
#include "aten/fallback.h"
#include "kernels/generated/elementwise_ops.h"
#include "kernels/index_check.h"

namespace torch_dml::aten {
namespace {

namespace ops = kernels::ops;

at::Tensor reduced(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

std::optional<at::Tensor> pointwise_loss(const kernels::ElementwiseOp& row, const at::Tensor& self,
                                         const at::Tensor& target, int64_t reduction, double parameter) {
  if (!elementwise::takes(self, target)) return std::nullopt;
  at::TensorIterator iter;
  iter.build_binary_op(at::Tensor(), self, target);
  if (!elementwise::run(row, iter, {parameter})) return std::nullopt;
  return reduced(iter.output(), reduction);
}

std::optional<at::Tensor> smooth_l1(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                                    double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return pointwise_loss(ops::smooth_l1, self, target, reduction, beta);
}

std::optional<at::Tensor> huber(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return pointwise_loss(ops::huber, self, target, reduction, delta);
}

// ---- binary_cross_entropy ------------------------------------------------------------------------

// The CPU refuses an input or target outside [0, 1] (or NaN). Reading that back would wait for the
// device at every loss, so the domain is reduced on the device and checked there
// (runtime/device_checks.h): the error is raised, as the CPU's RuntimeError, at the next wait.
void check_unit_interval(const at::Tensor& self, const at::Tensor& target) {
  if (self.numel() == 0) return;
  at::Tensor undefined;
  at::TensorIterator iter = at::TensorIteratorConfig().add_output(undefined).add_const_input(self)
                                .add_const_input(target).build();
  TORCH_INTERNAL_ASSERT(elementwise::run(ops::binary_cross_entropy_domain, iter, {}));
  // [largest, largest]: the check reads a [min, max] pair.
  const at::Tensor worst = iter.output().reshape({1, -1}).expand({2, -1}).amax(1).to(c10::kLong);
  runtime::DeviceContext& context = context_of(self);
  kernels::record_index_check(context, {.bounds = device_ref(worst), .low = 0, .high = 2,
                                        .op = "binary_cross_entropy",
                                        .message = "all elements of input should be between 0 and 1",
                                        .index_error = false});
  kernels::record_index_check(context, {.bounds = device_ref(worst), .low = 0, .high = 1,
                                        .op = "binary_cross_entropy",
                                        .message = "all elements of target should be between 0 and 1",
                                        .index_error = false});
}

bool takes_weighted(const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight) {
  return elementwise::takes(self, target) && (!weight.has_value() || !weight->defined() || elementwise::takes(*weight));
}

std::optional<at::Tensor> bce(const at::Tensor& self, const at::Tensor& target,
                                               const std::optional<at::Tensor>& weight, int64_t reduction) {
  if (!takes_weighted(self, target, weight)) return std::nullopt;
  at::Tensor undefined;
  at::TensorIterator iter = at::TensorIteratorConfig().add_output(undefined).add_const_input(self)
                                .add_const_input(target).build();
  if (!elementwise::run(ops::binary_cross_entropy, iter, {})) return std::nullopt;
  at::Tensor loss = iter.output();
  check_unit_interval(self, target);
  if (weight.has_value() && weight->defined()) loss.mul_(*weight);
  return reduced(loss, reduction);
}

// g (x - y) / max((1 - x) x, 1e-12), times the weight, over numel for a mean, as the CPU orders them.
// The forward pass recorded the domain check; the backward does not repeat it.
bool bce_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                       const at::Tensor& target, const std::optional<at::Tensor>& weight,
                                       int64_t reduction, const at::Tensor& grad_input) {
  if (!takes_weighted(self, target, weight) || !elementwise::takes(grad_output)) return false;
  at::TensorIterator iter = at::TensorIteratorConfig().add_output(grad_input).add_const_input(self)
                                .add_const_input(target).add_const_input(grad_output).build();
  // The CPU's epsilon is a float, also for float64 inputs.
  constexpr float kEpsilon = 1e-12f;
  if (!elementwise::run(ops::binary_cross_entropy_backward, iter, {static_cast<double>(kEpsilon)})) return false;
  if (weight.has_value() && weight->defined()) grad_input.mul_(*weight);
  if (reduction == at::Reduction::Mean) grad_input.div_(static_cast<double>(self.numel()));
  return true;
}

std::optional<at::Tensor> bce_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                                        const at::Tensor& target,
                                                        const std::optional<at::Tensor>& weight,
                                                        int64_t reduction) {
  const at::Tensor grad_input = at::empty_like(self, at::MemoryFormat::Contiguous);
  if (!bce_backward_out(grad_output, self, target, weight, reduction, grad_input))
    return std::nullopt;
  return grad_input;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/pointwise_loss_ops.inc"

} // namespace
} // namespace torch_dml::aten
