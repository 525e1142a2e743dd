// native_group_norm_backward composed from native reductions and elementwise ops (the forward is
// PyTorch's CompositeExplicitAutograd math, which already runs on dml ops). Per (sample, group), with
// xhat = (x - mean) * rstd and g = dy * weight:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dweight = sum(dy * xhat),  dbias = sum(dy)
// where the means run over the group's channels and positions and the sums over samples and positions.
// float16/bfloat16 compute in float32 (the CPU kernel accumulates in float32 too).
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/native_group_norm_backward_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>

#include "aten/fallback.h"
#include "aten/widen.h"

namespace torch_dml::aten {
namespace {

std::tuple<at::Tensor, at::Tensor, at::Tensor> group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
    const std::optional<at::Tensor>& weight, int64_t n, int64_t c, int64_t hxw, int64_t group,
    std::array<bool, 3> output_mask) {
  c10::DeviceGuard guard(input.device());
  const int64_t per_group = c / group;
  const at::Tensor x = widened(input).reshape({n, group, per_group, hxw});
  const at::Tensor dy = widened(grad_out).reshape({n, group, per_group, hxw});
  const at::Tensor r = widened(rstd).reshape({n, group, 1, 1});
  const at::Tensor xhat = (x - widened(mean).reshape({n, group, 1, 1})) * r;
  const bool has_weight = weight && weight->defined();
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    const at::Tensor g = has_weight ? dy * widened(*weight).reshape({1, group, per_group, 1}) : dy;
    // Dimensions as std::array: a braced list like {0, 3} also converts to DimnameList (pointer and
    // length) with torch 2.11's headers, which makes the call ambiguous there.
    constexpr std::array<int64_t, 2> kInGroup{2, 3};
    const at::Tensor dx = r * (g - g.mean(kInGroup, true) - xhat * (g * xhat).mean(kInGroup, true));
    grad_input = dx.reshape(input.sizes()).to(input.scalar_type());
  }
  constexpr std::array<int64_t, 2> kAcross{0, 3};  // samples and positions
  const c10::ScalarType param_type = has_weight ? weight->scalar_type() : input.scalar_type();
  if (output_mask[1]) grad_weight = (dy * xhat).sum(kAcross).reshape({c}).to(param_type);
  if (output_mask[2]) grad_bias = dy.sum(kAcross).reshape({c}).to(param_type);
  return {grad_input, grad_weight, grad_bias};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/group_norm_ops.inc"

} // namespace
} // namespace torch_dml::aten
