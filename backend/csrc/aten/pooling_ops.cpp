// max_pool2d (with indices) and its backward for float dtypes, one kernel each
// (kernels/pool2d_kernel): the forward scans each output's window for the maximum and PyTorch's flat
// input index (h * W + w), the backward gathers each input element's gradient from the outputs that
// saved it. Both read and write every layout through its strides; a 16-bit dtype is computed into
// float32 and rounded once. What the kernels decline (float64 without shader-f64 and shader-int64,
// extents past their 32-bit arithmetic) goes to the counted CPU fallback before anything is written.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/max_pool2d_with_indices_backward_ops.h>
#include <ATen/ops/max_pool2d_with_indices_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/pool_tensors.h"
#include "aten/word_view.h"
#include "kernels/pool2d_kernel.h"

namespace torch_dml::aten {
namespace {

struct Pool2d {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw, h, w, oh, ow;
};

bool native_pool(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                 at::IntArrayRef dilation) {
  auto ok = [](at::IntArrayRef v, bool empty_ok) { return (v.empty() && empty_ok) || v.size() == 1 || v.size() == 2; };
  return (self.dim() == 3 || self.dim() == 4) && self.numel() > 0 && ok(kernel, false) &&
      ok(stride, true) && ok(padding, false) && ok(dilation, false);
}

Pool2d pool_shape(const at::Tensor& x, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                  at::IntArrayRef dilation, bool ceil_mode) {
  auto second = [](at::IntArrayRef v) { return v.size() == 2 ? v[1] : v[0]; };
  Pool2d p{};
  p.kh = kernel[0], p.kw = second(kernel);
  p.sh = stride.empty() ? p.kh : stride[0], p.sw = stride.empty() ? p.kw : second(stride);
  p.ph = padding[0], p.pw = second(padding), p.dh = dilation[0], p.dw = second(dilation);
  TORCH_CHECK(p.kh > 0 && p.kw > 0 && p.sh > 0 && p.sw > 0 && p.dh > 0 && p.dw > 0,
              "max_pool2d: kernel_size, stride and dilation must be greater than zero");
  TORCH_CHECK(p.ph >= 0 && p.pw >= 0 && p.ph <= p.kh / 2 && p.pw <= p.kw / 2,
              "pad should be at most half of effective kernel size, but got pad=", p.ph, ", kernel_size=", p.kh);
  p.h = x.size(2), p.w = x.size(3);
  p.oh = at::native::pooling_output_shape<int64_t>(p.h, p.kh, p.ph, p.sh, p.dh, ceil_mode);
  p.ow = at::native::pooling_output_shape<int64_t>(p.w, p.kw, p.pw, p.sw, p.dw, ceil_mode);
  TORCH_CHECK(p.oh > 0 && p.ow > 0, "max_pool2d: output size is too small for input (", p.h, ", ", p.w, ")");
  return p;
}

// The problem's geometry and layout for a 4-D input; operands are set by the caller.
kernels::Pool2dProblem problem_for(const at::Tensor& x, const Pool2d& p, bool backward) {
  kernels::Pool2dProblem m;
  kernels::Pool2dGeometry& g = m.g;
  g.batch = x.size(0), g.channels = x.size(1), g.in_h = p.h, g.in_w = p.w, g.out_h = p.oh, g.out_w = p.ow;
  g.kernel[0] = p.kh, g.kernel[1] = p.kw, g.stride[0] = p.sh, g.stride[1] = p.sw;
  g.padding[0] = p.ph, g.padding[1] = p.pw, g.dilation[0] = p.dh, g.dilation[1] = p.dw;
  m.dtype = x.scalar_type();
  m.channels_fast = x.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
  m.backward = backward;
  return m;
}

// int64 indices as the kernels bind them: u32 words, strides in words.
kernels::ImageOperand index_words(const at::Tensor& indices) {
  kernels::ImageOperand op{device_words(indices)};
  for (int d = 0; d < 4; ++d) op.strides[d] = 2 * indices.stride(d);
  return op;
}

bool max_pool2d_out(const at::Tensor& self, at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding,
                    at::IntArrayRef dilation, bool ceil_mode, const at::Tensor& out, const at::Tensor& indices) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type() && indices.scalar_type() == c10::kLong,
              "max_pool2d: expected out of dtype ", self.scalar_type(), " and indices of dtype Long, got ",
              out.scalar_type(), " and ", indices.scalar_type());
  c10::DeviceGuard guard(self.device());
  const at::Tensor x = as4d(self);
  const Pool2d p = pool_shape(x, kernel, stride, padding, dilation, ceil_mode);
  std::vector<int64_t> sizes = {x.size(0), x.size(1), p.oh, p.ow};
  if (self.dim() == 3) sizes.erase(sizes.begin());
  // Sized first, so the kernel's check sees every operand; the fallback would size them the same way.
  resize_like_input(out, sizes, self);
  resize_like_input(indices, sizes, self);
  at::assert_no_internal_overlap(out);
  at::assert_no_internal_overlap(indices);
  const at::Tensor values = written_form(out);
  kernels::Pool2dProblem m = problem_for(x, p, false);
  m.image = image_operand(x);
  m.pooled = image_operand(as4d(values));
  m.indices = index_words(as4d(indices));
  runtime::DeviceContext& context = context_of(self);
  if (!kernels::pool2d_unsupported_reason(context, m).empty()) return false;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::pool2d(context, m);
  }
  if (!values.is_same(out)) out.copy_(values);
  return true;
}

bool max_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self, at::IntArrayRef kernel,
                             at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool ceil_mode,
                             const at::Tensor& indices, const at::Tensor& grad_input) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor x = as4d(self), grad = as4d(grad_output), saved = as4d(indices);
  const Pool2d p = pool_shape(x, kernel, stride, padding, dilation, ceil_mode);
  TORCH_CHECK(grad.sizes() == saved.sizes() && grad.size(0) == x.size(0) && grad.size(1) == x.size(1) &&
                  grad.size(2) == p.oh && grad.size(3) == p.ow,
              "max_pool2d_backward: grad_output ", grad_output.sizes(), " and indices ", indices.sizes(),
              " do not match the pooled size of input ", self.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type() && grad_input.scalar_type() == self.scalar_type() &&
                  indices.scalar_type() == c10::kLong,
              "max_pool2d_backward: expected grad_output and grad_input of dtype ", self.scalar_type(),
              " and indices of dtype Long");
  resize_like_input(grad_input, self.sizes(), self);
  at::assert_no_internal_overlap(grad_input);
  const at::Tensor sums = written_form(grad_input);
  kernels::Pool2dProblem m = problem_for(x, p, true);
  m.image = image_operand(as4d(sums));
  m.pooled = image_operand(grad);
  m.indices = index_words(saved);
  runtime::DeviceContext& context = context_of(self);
  if (!kernels::pool2d_unsupported_reason(context, m).empty()) return false;
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::pool2d(context, m);
  }
  if (!sums.is_same(grad_input)) grad_input.copy_(sums);
  return true;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/pooling_ops.inc"

} // namespace
} // namespace torch_dml::aten
