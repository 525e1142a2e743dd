// nll_loss2d (cross_entropy over an image: (N, C, H, W) scores, (N, H, W) targets) as nll_loss over
// the (N * H * W, C) view with classes last, so it runs on the same native kernel (or that op's own
// fallback rule). Shapes nll_loss2d would reject go to the CPU fallback, which raises its own error.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/nll_loss2d_backward_ops.h>
#include <ATen/ops/nll_loss2d_forward_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

bool image_case(const at::Tensor& self, const at::Tensor& target) {
  return self.dim() == 4 && target.dim() == 3 && target.size(0) == self.size(0) && target.size(1) == self.size(2) &&
      target.size(2) == self.size(3);
}

// (N, C, H, W) -> (N * H * W, C): each pixel is a sample.
at::Tensor pixels(const at::Tensor& scores) {
  return scores.movedim(1, -1).reshape({-1, scores.size(1)});
}

std::tuple<at::Tensor&, at::Tensor&> forward_out(const at::Tensor& self, const at::Tensor& target,
                                                 const std::optional<at::Tensor>& weight, int64_t reduction,
                                                 int64_t ignore_index, at::Tensor& output,
                                                 at::Tensor& total_weight) {
  c10::DeviceGuard guard(self.device());
  auto [loss, total] = at::nll_loss_forward(pixels(self), target.reshape({-1}), weight, reduction, ignore_index);
  assign_out(output, reduction == at::Reduction::None ? loss.view(target.sizes()) : loss);
  assign_out(total_weight, total);
  return {output, total_weight};
}

std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& self, const at::Tensor& target,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           int64_t ignore_index) {
  at::Tensor output = at::empty({0}, self.options()), total_weight = at::empty({0}, self.options());
  forward_out(self, target, weight, reduction, ignore_index, output, total_weight);
  return {output, total_weight};
}

at::Tensor& backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                         const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                         const at::Tensor& total_weight, at::Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor grad = reduction == at::Reduction::None ? grad_output.reshape({-1}) : grad_output;
  const at::Tensor flat = at::nll_loss_backward(grad, pixels(self), target.reshape({-1}), weight, reduction,
                                                       ignore_index, total_weight);
  // Back from pixels-major to (N, C, H, W).
  const at::Tensor image = flat.view({self.size(0), self.size(2), self.size(3), self.size(1)}).permute({0, 3, 1, 2});
  assign_out(grad_input, image.contiguous());
  return grad_input;
}

at::Tensor backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                    const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index,
                    const at::Tensor& total_weight) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return backward_out(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                      grad_input);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/nll_loss2d_ops.inc"

} // namespace
} // namespace torch_dml::aten
