// The two ops of torch.amp.GradScaler, composed from native ops with no read back to the host (the
// scaler's decisions stay on the device, as on CUDA, so a training step does not wait on them).
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

namespace torch_dml::aten {
namespace {

// Each gradient is multiplied by inv_scale; found_inf becomes 1 when any of them holds an inf or NaN
// (and keeps its 1 if it had one).
void non_finite_check_and_unscale(at::TensorList grads, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  TORCH_CHECK(inv_scale.numel() == 1, "inv_scale must be a 1-element tensor.");
  TORCH_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  TORCH_CHECK(inv_scale.scalar_type() == c10::kFloat, "inv_scale must be a float tensor.");
  TORCH_CHECK(found_inf.scalar_type() == c10::kFloat, "found_inf must be a float tensor.");
  if (grads.empty()) return;
  c10::DeviceGuard guard(found_inf.device());
  std::vector<at::Tensor> non_finite;
  non_finite.reserve(grads.size());
  for (const at::Tensor& grad : grads) {
    TORCH_CHECK(grad.device() == found_inf.device(), "_amp_foreach_non_finite_check_and_unscale_: gradient on ",
                grad.device(), ", found_inf on ", found_inf.device());
    TORCH_CHECK(at::isFloatingType(grad.scalar_type()), "_amp_foreach_non_finite_check_and_unscale_: gradient of ",
                grad.scalar_type(), " is not floating point");
    if (grad.numel() == 0) continue;
    non_finite.push_back(at::logical_not(at::isfinite(grad)).any().reshape({1}));
    grad.mul_(inv_scale);
  }
  if (non_finite.empty()) return;
  const at::Tensor any = at::cat(non_finite).any().to(c10::kFloat).reshape(found_inf.sizes());
  found_inf.copy_(at::maximum(found_inf, any));
}

// After an overflow the scale backs off and the streak restarts; after growth_interval clean steps in
// a row it grows (unless growing would overflow float32).
at::Tensor& update_scale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                         double growth_factor, double backoff_factor, int64_t growth_interval) {
  TORCH_CHECK(scale.numel() == 1 && growth_tracker.numel() == 1 && found_inf.numel() == 1,
              "_amp_update_scale_: scale, growth_tracker and found_inf must be 1-element tensors");
  TORCH_CHECK(scale.scalar_type() == c10::kFloat, "current_scale must be a float tensor.");
  TORCH_CHECK(growth_tracker.scalar_type() == c10::kInt, "growth_tracker must be an int tensor.");
  c10::DeviceGuard guard(scale.device());
  const at::Tensor found = found_inf.reshape(scale.sizes()) > 0;
  const at::Tensor streak = growth_tracker.reshape(scale.sizes()) + 1;
  const at::Tensor grow = at::logical_and(at::logical_not(found), streak == growth_interval);
  const at::Tensor grown = scale * growth_factor;
  const at::Tensor next = at::where(found, scale * backoff_factor,
                                    at::where(at::logical_and(grow, at::isfinite(grown)), grown, scale));
  const at::Tensor next_streak = at::where(at::logical_or(found, grow), at::zeros_like(streak), streak);
  growth_tracker.copy_(next_streak.reshape(growth_tracker.sizes()));
  scale.copy_(next);
  return scale;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/amp_ops.inc"

} // namespace
} // namespace torch_dml::aten
