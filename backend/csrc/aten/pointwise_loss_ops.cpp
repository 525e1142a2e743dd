// smooth_l1_loss and huber_loss: the elementwise loss is a row of backend/ops.yaml (in the CPU's order
// of operations), then the reduction's mean or sum on the device. Their backward passes are rows too,
// registered from ops.yaml. A dtype the rows do not take goes to the counted CPU fallback (`tries`).
#include <ATen/TensorIterator.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/huber_loss_ops.h>
#include <ATen/ops/smooth_l1_loss_ops.h>
#include <torch/library.h>

#include <optional>

#include "aten/common.h"
#include "aten/elementwise.h"
#include "aten/fallback.h"
#include "kernels/generated/elementwise_ops.h"

namespace torch_dml::aten {
namespace {

namespace ops = kernels::ops;

std::optional<at::Tensor> pointwise_loss(const kernels::ElementwiseOp& row, const at::Tensor& self,
                                         const at::Tensor& target, int64_t reduction, double parameter) {
  if (!elementwise::takes(self, target)) return std::nullopt;
  at::TensorIterator iter;
  iter.build_binary_op(at::Tensor(), self, target);
  if (!elementwise::run(row, iter, {parameter})) return std::nullopt;
  const at::Tensor& loss = iter.output();
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

std::optional<at::Tensor> smooth_l1(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                                    double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return pointwise_loss(ops::smooth_l1, self, target, reduction, beta);
}

bool smooth_l1_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                   const at::Tensor& out) {
  std::optional<at::Tensor> loss = smooth_l1(self, target, reduction, beta);
  if (loss) assign_out(out, *loss);
  return loss.has_value();
}

std::optional<at::Tensor> huber(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return pointwise_loss(ops::huber, self, target, reduction, delta);
}

bool huber_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
               const at::Tensor& out) {
  std::optional<at::Tensor> loss = huber(self, target, reduction, delta);
  if (loss) assign_out(out, *loss);
  return loss.has_value();
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/pointwise_loss_ops.inc"

} // namespace
} // namespace torch_dml::aten
