// linspace and logspace for floating dtypes as a few native elementwise ops over an arange, with the
// CPU kernel's formula: the first half counts up from start, the second down from end, so both ends
// are exact. float16 / bfloat16 compute in float32 and round once. Integer dtypes go to the CPU
// fallback: its vectorised loop truncates the step to the integer type in some lanes and not in others,
// an order no elementwise formula reproduces.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/linspace_ops.h>
#include <ATen/ops/logspace_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {


// The `steps` values from start to end, evenly spaced, in float32 (float64 for a float64 out).
at::Tensor evenly_spaced(const at::Scalar& start, const at::Scalar& end, int64_t steps, const at::Tensor& out) {
  const c10::ScalarType compute = out.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  const at::TensorOptions options = out.options().dtype(compute);
  if (steps == 1) return at::full({1}, start, options);
  const double first = start.toDouble(), last = end.toDouble();
  const at::Tensor idx = at::arange(steps, options);
  // The step rounded to the computing type first, as the CPU computes it in the output's type.
  const double step = compute == c10::kFloat
      ? static_cast<double>((static_cast<float>(last) - static_cast<float>(first)) / static_cast<float>(steps - 1))
      : (last - first) / static_cast<double>(steps - 1);
  const at::Tensor up = (idx * step).add_(first);
  const at::Tensor down = (idx.neg() + static_cast<double>(steps - 1)).mul_(-step).add_(last);
  return at::where(idx < static_cast<double>(steps / 2), up, down);
}

at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  c10::DeviceGuard guard(out.device());
  if (steps == 0) {
    out.resize_({0});
    return out;
  }
  assign_out(out, evenly_spaced(start, end, steps, out));
  return out;
}

at::Tensor& logspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps, double base,
                         at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  c10::DeviceGuard guard(out.device());
  if (steps == 0) {
    out.resize_({0});
    return out;
  }
  const at::Tensor exponents = evenly_spaced(start, end, steps, out);
  assign_out(out, at::pow(at::scalar_tensor(base, exponents.options()), exponents));
  return out;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/range_ops.inc"

} // namespace
} // namespace torch_dml::aten
