// randperm as the sorting permutation of random keys: each position draws a 63-bit key from three
// float32 draws of the device's Philox stream (uniform_, so torch.manual_seed and generators act as on
// the other random ops), and the row sort's stable order of the keys is the permutation. Equal keys
// keep index order; with 63 bits even n = 2^28 expects about 2^-8 equal pairs, so the permutation is
// uniform for any size a device holds. Output dtypes the kernels do not cover go to the counted
// fallback.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorFactories.h>
#include <ATen/ops/randperm_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/row_sort.h"

namespace torch_dml::aten {
namespace {

// Each float32 uniform draw in [0, 1) carries 24 random bits (kernels/random_kernel.h).
constexpr int64_t kDrawBits = 24;

// n random 63-bit keys: 24 + 24 + 15 bits of three draws.
at::Tensor random_keys(int64_t n, const at::TensorOptions& options, const std::optional<at::Generator>& generator) {
  const auto draw = [&] {
    at::Tensor unit = at::empty({n}, options.dtype(c10::kFloat));
    unit.uniform_(0.0, 1.0, generator);
    return (unit * static_cast<double>(int64_t{1} << kDrawBits)).to(c10::kLong); // exact: 24-bit values
  };
  const at::Tensor high = draw(), middle = draw(), low = draw();
  return high * (int64_t{1} << 39) + middle * (int64_t{1} << 15) + at::floor_divide(low, int64_t{1} << 9);
}

// false, with out unwritten, where the sort kernel does not take the keys (native.yaml: `tries`).
bool permutation_out(int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  c10::DeviceGuard guard(out.device());
  at::native::check_supported_max_int_with_precision(n, out);
  at::native::resize_output(out, {n});
  if (n == 0) return true;
  const std::optional<at::Tensor> order = sort_order(random_keys(n, out.options(), generator).view({1, n}), false);
  if (!order) return false;
  out.copy_(order->view({n}));
  return true;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/randperm_ops.inc"

} // namespace
} // namespace torch_dml::aten
