// mse_loss and its backward, composed from native elementwise ops and reductions (ATen's own kernels are
// CPU/CUDA-only, so without these the loss and its gradient went through the CPU fallback).
#include <ATen/core/Reduction.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sub.h>
#include <torch/library.h>

#include "aten/common.h"

namespace torch_dml::aten {
namespace {

at::Tensor mse(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  const at::Tensor diff = at::sub(self, target);
  const at::Tensor squared = at::mul(diff, diff);
  if (reduction == at::Reduction::Mean) return squared.mean();
  if (reduction == at::Reduction::Sum) return squared.sum();
  return squared;
}

at::Tensor& mse_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& out) {
  assign_out(out, mse(self, target, reduction));
  return out;
}

// d/dself of mean((self - target)^2) is 2 (self - target) / numel, times the incoming gradient.
at::Tensor mse_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                             int64_t reduction) {
  const double norm = reduction == at::Reduction::Mean ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  return at::mul(at::sub(self, target), grad_output).mul_(norm);
}

at::Tensor& mse_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                  int64_t reduction, at::Tensor& grad_input) {
  assign_out(grad_input, mse_backward(grad_output, self, target, reduction));
  return grad_input;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/mse_loss_ops.inc"

} // namespace
} // namespace torch_dml::aten
