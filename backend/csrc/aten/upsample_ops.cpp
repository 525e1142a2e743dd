// 2-D upsampling on the upsample kernel (kernels/upsample_kernel.h): upsample_nearest2d,
// _upsample_nearest_exact2d and upsample_bilinear2d, forward (.out) and backward (.grad_input), for
// float32/float16/bfloat16, and float64 where the adapter has shader-f64 and shader-int64. Their 1-D
// forms (upsample_nearest1d, _upsample_nearest_exact1d, upsample_linear1d) are the same kernel over
// images one row high, whose height axis every mode maps onto itself.
// F.interpolate reaches them through the CompositeImplicit `.vec` overloads, and the functional forms
// through the structured CompositeExplicitAutogradNonFunctional wrappers, which call these out=
// kernels; the two `.vec_out` overloads are registered too. Other dtypes and more than 2^32 elements go to the (counted) CPU fallback. Each axis' scale is computed here with PyTorch's own functions
// (ATen/native/UpSample.h), so the user's scale or the size ratio is used exactly as on the CPU.
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/_upsample_nearest_exact1d_backward_ops.h>
#include <ATen/ops/_upsample_nearest_exact1d_ops.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward_ops.h>
#include <ATen/ops/_upsample_nearest_exact2d_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/upsample_bilinear2d_backward_ops.h>
#include <ATen/ops/upsample_bilinear2d_ops.h>
#include <ATen/ops/upsample_linear1d_backward_ops.h>
#include <ATen/ops/upsample_linear1d_ops.h>
#include <ATen/ops/upsample_nearest1d_backward_ops.h>
#include <ATen/ops/upsample_nearest1d_ops.h>
#include <ATen/ops/upsample_nearest2d_backward_ops.h>
#include <ATen/ops/upsample_nearest2d_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/native_run.h"
#include "kernels/upsample_kernel.h"

namespace torch_dml::aten {
namespace {

using kernels::UpsampleMode;
using kernels::UpsampleRule;
using Scale = std::optional<double>;

kernels::UpsampleAxis axis(UpsampleMode mode, bool align_corners, int64_t in, int64_t out, Scale scale,
                           c10::ScalarType type) {
  kernels::UpsampleAxis a;
  a.in = static_cast<uint64_t>(in);
  a.out = static_cast<uint64_t>(out);
  switch (mode) {
    case UpsampleMode::Nearest: // nearest_idx's special cases, then compute_scales_value<float>
      a.rule = out == in ? UpsampleRule::Identity : out == 2 * in ? UpsampleRule::Half : UpsampleRule::Scaled;
      a.scale = at::native::compute_scales_value<float>(scale, in, out);
      break;
    case UpsampleMode::NearestExact: // nearest_exact_idx has no special case
      a.rule = UpsampleRule::Scaled;
      a.scale = at::native::compute_scales_value<float>(scale, in, out);
      break;
    case UpsampleMode::Bilinear: // compute_source_index_and_lambda in the opmath type
      a.rule = out == in ? UpsampleRule::Identity : UpsampleRule::Scaled;
      a.scale = type == c10::kDouble ? at::native::area_pixel_compute_scale<double>(in, out, align_corners, scale)
                                     : at::native::area_pixel_compute_scale<float>(in, out, align_corners, scale);
      break;
  }
  return a;
}

bool served(const at::Tensor& src, const at::Tensor& dst, int64_t dims = 4) {
  const c10::ScalarType type = src.scalar_type();
  return (type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16 || type == c10::kDouble) &&
      dst.scalar_type() == type && src.dim() == dims && dst.device() == src.device();
}

// Runs the kernel from `src` into `dst` (already of its final shape); false when the kernel cannot
// take the problem, before anything was recorded.
bool run(UpsampleMode mode, bool backward, bool align_corners, const at::Tensor& src, const at::Tensor& dst,
         at::IntArrayRef input_size, at::IntArrayRef output_size, Scale scales_h, Scale scales_w) {
  if (dst.numel() == 0) return true;
  const at::Tensor source = src.contiguous();
  // The kernel writes whole words of a contiguous tensor starting on a word.
  const bool direct = dst.is_contiguous() && device_ref(dst).element_offset * dst.element_size() % 4 == 0;
  const at::Tensor target = direct ? dst : at::empty(dst.sizes(), dst.options());
  kernels::UpsampleProblem problem;
  problem.mode = mode;
  problem.backward = backward;
  problem.align_corners = align_corners;
  problem.planes = static_cast<uint64_t>(input_size[0] * input_size[1]);
  problem.h = axis(mode, align_corners, input_size[2], output_size[0], scales_h, src.scalar_type());
  problem.w = axis(mode, align_corners, input_size[3], output_size[1], scales_w, src.scalar_type());
  problem.dst = device_ref(target);
  problem.src = device_ref(source);
  if (!run_native(context_of(src), problem, &kernels::upsample_unsupported_reason, &kernels::upsample)) return false;
  if (!direct) dst.copy_(target);
  return true;
}

void check_input(const at::Tensor& input) {
  TORCH_CHECK(input.numel() != 0 || c10::multiply_integers(input.sizes().begin() + 1, input.sizes().end()),
              "Non-empty 4D data tensor expected but got a tensor with sizes ", input.sizes());
}

bool forward(UpsampleMode mode, bool align_corners, const at::Tensor& input, at::IntArrayRef output_size,
             Scale scales_h, Scale scales_w, at::Tensor& out) {
  if (!served(input, out)) return false;
  c10::DeviceGuard guard(input.device());
  const auto full = at::native::upsample_2d_common_check(input.sizes(), output_size);
  check_input(input);
  at::native::resize_output(out, full);
  return run(mode, false, align_corners, input, out, input.sizes(), output_size, scales_h, scales_w);
}

bool backward(UpsampleMode mode, bool align_corners, const at::Tensor& grad_output, at::IntArrayRef output_size,
              at::IntArrayRef input_size, Scale scales_h, Scale scales_w, at::Tensor& grad_input) {
  if (!served(grad_output, grad_input)) return false;
  c10::DeviceGuard guard(grad_output.device());
  const auto full = at::native::upsample_2d_common_check(input_size, output_size);
  TORCH_CHECK(grad_output.dim() == 4, "Expected grad_output to be a tensor of dimension 4 but got: dimension ",
              grad_output.dim());
  for (int64_t d = 0; d < 4; ++d)
    TORCH_CHECK(grad_output.size(d) == full[d], "Expected grad_output to have the same shape as output; output.size(",
                d, ") = ", full[d], " but got grad_output.size(", d, ") = ", grad_output.size(d));
  at::native::resize_output(grad_input, input_size);
  return run(mode, true, align_corners, grad_output, grad_input, input_size, output_size, scales_h, scales_w);
}

// 1-D: (N, C, W) as (N, C, 1, W).
bool forward_1d(UpsampleMode mode, bool align_corners, const at::Tensor& input, at::IntArrayRef output_size,
                Scale scales, at::Tensor& out) {
  if (!served(input, out, 3)) return false;
  c10::DeviceGuard guard(input.device());
  const auto full = at::native::upsample_1d_common_check(input.sizes(), output_size);
  check_input(input);
  at::native::resize_output(out, full);
  return run(mode, false, align_corners, input.unsqueeze(2), out.unsqueeze(2),
             {input.size(0), input.size(1), 1, input.size(2)}, {1, output_size[0]}, std::nullopt, scales);
}

bool backward_1d(UpsampleMode mode, bool align_corners, const at::Tensor& grad_output, at::IntArrayRef output_size,
                 at::IntArrayRef input_size, Scale scales, at::Tensor& grad_input) {
  if (!served(grad_output, grad_input, 3)) return false;
  c10::DeviceGuard guard(grad_output.device());
  const auto full = at::native::upsample_1d_common_check(input_size, output_size);
  for (int64_t d = 0; d < 3; ++d)
    TORCH_CHECK(grad_output.size(d) == full[d], "Expected grad_output to have the same shape as output; output.size(",
                d, ") = ", full[d], " but got grad_output.size(", d, ") = ", grad_output.size(d));
  at::native::resize_output(grad_input, input_size);
  return run(mode, true, align_corners, grad_output.unsqueeze(2), grad_input.unsqueeze(2),
             {input_size[0], input_size[1], 1, input_size[2]}, {1, output_size[0]}, std::nullopt, scales);
}

// The `.vec_out` overloads (sizes or scale factors, as F.interpolate takes them, with an out=) have a
// CPU kernel but no composite one: resolved here as the CPU resolves them, onto the kernels above.
bool vec_forward(UpsampleMode mode, bool align_corners, const at::Tensor& input, at::OptionalIntArrayRef output_size,
                 std::optional<at::ArrayRef<double>> scale_factors, at::Tensor& out) {
  const auto size = at::native::upsample::compute_output_size(input.sizes(), output_size, scale_factors);
  return forward(mode, align_corners, input, size, at::native::upsample::get_scale_value(scale_factors, 0),
                 at::native::upsample::get_scale_value(scale_factors, 1), out);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/upsample_ops.inc"

} // namespace
} // namespace torch_dml::aten
