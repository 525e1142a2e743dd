// nll_loss forward and backward (so cross_entropy = log_softmax + nll_loss trains natively) for
// (N, C) inputs with int64 targets; other shapes go to the counted fallback.
#include <ATen/core/Reduction.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/nll_loss_forward_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/index_range.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "kernels/nll_loss_kernel.h"

namespace torch_dml::aten {
namespace {

bool native_case(const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight) {
  const auto type = self.scalar_type();
  return self.dim() == 2 && target.dim() == 1 && target.scalar_type() == c10::kLong &&
      target.size(0) == self.size(0) && (!weight || !weight->defined() || weight->scalar_type() == type);
}

void check_targets(const at::Tensor& target, int64_t classes, int64_t ignore_index) {
  check_index_range(target, 0, classes, "nll_loss", "Target {} is out of bounds.", ignore_index);
}

// The kernel's problem over contiguous copies of the operands, which it keeps alive until the kernel is
// recorded, writing `result`.
struct LossOperands {
  at::Tensor input, target, weight;
  kernels::NllLossProblem problem;
};

LossOperands loss_operands(const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight,
                           int64_t reduction, int64_t ignore_index, const at::Tensor& result) {
  LossOperands o{self.contiguous(), target.contiguous(), weight && weight->defined() ? weight->contiguous() : at::Tensor(),
                 {}};
  kernels::NllLossProblem& problem = o.problem;
  problem.reduction = reduction;
  problem.ignore_index = ignore_index;
  problem.samples = static_cast<uint64_t>(self.size(0));
  problem.classes = static_cast<uint64_t>(self.size(1));
  problem.input = device_ref(o.input);
  problem.target = device_ref(o.target);
  if (o.weight.defined()) problem.weight = device_ref(o.weight);
  problem.out = device_ref(result);
  return o;
}

void run_loss(const at::Tensor& self, const kernels::NllLossProblem& problem) {
  runtime::DeviceContext& context = context_of(self);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernels::nll_loss(context, problem);
}

std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward(const at::Tensor& self, const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight, int64_t reduction,
                                                      int64_t ignore_index, at::Tensor& output,
                                                      at::Tensor& total_weight) {
  c10::DeviceGuard guard(self.device());
  check_targets(target, self.size(1), ignore_index);
  const at::TensorOptions f32 = self.options().dtype(c10::kFloat);
  const bool per_sample = reduction == at::Reduction::None;
  at::Tensor result = at::empty({per_sample ? self.size(0) : 2}, f32);
  const LossOperands operands = loss_operands(self, target, weight, reduction, ignore_index, result);
  if (operands.problem.samples > 0 || !per_sample) run_loss(self, operands.problem);
  if (per_sample) {
    at::native::resize_output(output, {self.size(0)});
    output.copy_(result);
    at::native::resize_output(total_weight, {});
    total_weight.zero_();
  } else {
    at::native::resize_output(output, {});
    at::native::resize_output(total_weight, {});
    output.copy_(result[0]);
    total_weight.copy_(result[1]);
  }
  return {output, total_weight};
}

at::Tensor& nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                              const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                              const at::Tensor& total_weight, at::Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  const at::TensorOptions f32 = self.options().dtype(c10::kFloat);
  at::Tensor result = at::empty(self.sizes(), f32);
  result.zero_();
  at::Tensor grad = grad_output.to(c10::kFloat).contiguous(), total = total_weight.to(c10::kFloat).contiguous();
  LossOperands operands =
      loss_operands(self, target, weight, reduction, ignore_index, result);
  operands.problem.backward = true;
  operands.problem.grad = device_ref(grad);
  operands.problem.total = device_ref(total);
  if (operands.problem.samples > 0) run_loss(self, operands.problem);
  at::native::resize_output(grad_input, self.sizes());
  grad_input.copy_(result);
  return grad_input;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/loss_ops.inc"

} // namespace
} // namespace torch_dml::aten
