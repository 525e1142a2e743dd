// cumsum, cumprod and logcumsumexp on the scan kernel (the scanned dim is moved last and made
// contiguous; sums of integers and bool accumulate in int64, float16/bfloat16 in float32, as on the
// CPU), and nonzero on scan + compaction.
#include <ATen/ATen.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_logcumsumexp_ops.h>
#include <ATen/ops/cumprod_ops.h>
#include <ATen/ops/cumsum_ops.h>
#include <ATen/ops/nonzero_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/native_run.h"
#include "aten/selection.h"
#include "kernels/scan_kernel.h"

namespace torch_dml::aten {
namespace {

using kernels::ScanOp;

// The inclusive scan of `self` along `dim`, in the accumulation dtype; nullopt when the kernel cannot.
std::optional<at::Tensor> scan_along(const at::Tensor& self, int64_t dim, ScanOp op) {
  const int64_t d = at::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const at::Tensor rows = self.dim() == 0 ? self.reshape({1}) : self.movedim(d, -1).contiguous();
  runtime::DeviceContext& context = context_of(self);
  at::Tensor out =
      at::empty(rows.sizes(), rows.options().dtype(kernels::scan_accumulation_type(context, self.scalar_type(), op)));
  if (out.numel() > 0) {
    kernels::ScanProblem problem;
    problem.op = op;
    problem.length = static_cast<uint64_t>(rows.size(-1));
    problem.rows = static_cast<uint64_t>(rows.numel()) / problem.length;
    problem.out = device_ref(out);
    problem.src = device_ref(rows);
    if (!run_native(context, problem, &kernels::scan_unsupported_reason, &kernels::scan)) return std::nullopt;
  }
  return self.dim() == 0 ? out.reshape({}) : out.movedim(-1, d).contiguous();
}

c10::ScalarType sum_type(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (dtype) return *dtype;
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? c10::kLong : self.scalar_type();
}

// The kernels return the result, or nothing where the scan kernel does not take the input; the out= and
// in-place overloads' outputs are written by the generated kernels.
std::optional<at::Tensor> running(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype, ScanOp op) {
  c10::DeviceGuard guard(self.device());
  auto result = scan_along(dtype ? self.to(*dtype) : self, dim, op);
  return result ? std::optional<at::Tensor>(result->to(sum_type(self, dtype))) : std::nullopt;
}

std::optional<at::Tensor> running_logsumexp(const at::Tensor& self, int64_t dim) {
  c10::DeviceGuard guard(self.device());
  auto result = scan_along(self, dim, ScanOp::LogSumExp);
  return result ? std::optional<at::Tensor>(result->to(self.scalar_type())) : std::nullopt;
}

std::optional<at::Tensor> nonzero_positions(const at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  if (self.numel() >= (int64_t{1} << 31)) return std::nullopt;
  auto positions = set_positions(self.reshape({-1}));
  if (!positions) return std::nullopt;
  if (self.dim() == 0) return at::empty({positions->numel(), 0}, positions->options());
  return at::stack(unravel(*positions, self.sizes()), 1);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/scan_ops.inc"

} // namespace

std::optional<at::Tensor> set_positions(const at::Tensor& flat) {
  const std::optional<at::Tensor> running = scan_along(flat.ne(0), 0, ScanOp::Sum);
  if (!running) return std::nullopt;
  const int64_t selected = flat.numel() ? (*running)[-1].item<int64_t>() : 0;
  at::Tensor out = at::empty({selected}, flat.options().dtype(c10::kLong));
  if (selected == 0) return out;
  kernels::CompactProblem problem;
  problem.count = static_cast<uint64_t>(flat.numel());
  problem.selected = static_cast<uint64_t>(selected);
  problem.out = device_ref(out);
  problem.running = device_ref(*running);
  if (!run_native(context_of(flat), problem, &kernels::compact_unsupported_reason, &kernels::compact))
    return std::nullopt;
  return out;
}

std::vector<at::Tensor> unravel(const at::Tensor& positions, at::IntArrayRef sizes) {
  std::vector<at::Tensor> coordinates;
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    // Positions are never negative, so truncating division is floor division here.
    coordinates.insert(coordinates.begin(), at::remainder(at::floor_divide(positions, stride), sizes[d]));
    stride *= sizes[d];
  }
  return coordinates;
}

} // namespace torch_dml::aten
