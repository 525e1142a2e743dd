// random_(from, to), random_(to) and random_(): uniform integers (torch.randint lands here), composed
// from the native uniform_ draw. Each float32 draw carries exactly 24 random bits
// (kernels/random_kernel.h), so two draws make a 48-bit integer and its remainder by the range is
// uniform to within range / 2^48 (CUDA's 32-bit draw is biased by range / 2^32). Without an upper
// bound the range ends, inclusively, where the CPU's does: 2^digits for a float type (every integer up
// to it is exact), the type's maximum for an integer one. Ranges beyond 2^48 (int64 and float64 without
// bounds among them), adapters without shader-int64 and bounds outside the dtype go to the counted
// fallback, which raises PyTorch's own errors for the invalid ones.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/random_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <optional>

#include "aten/common.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

constexpr int64_t kBits = 24;
constexpr int64_t kMaxRange = int64_t{1} << (2 * kBits);

// Whether [from, to) holds only values `type` represents exactly.
bool representable(c10::ScalarType type, int64_t from, int64_t to) {
  if (type == c10::kBool) return from >= 0 && to <= 2;
  if (at::isFloatingType(type)) {
    const int digits = type == c10::kDouble ? 53 : type == c10::kFloat ? 24 : type == c10::kHalf ? 11 : 8;
    const int64_t exact = int64_t{1} << digits;
    return from >= -exact && to - 1 <= exact;
  }
  int64_t low = 0, high = 0;
  AT_DISPATCH_INTEGRAL_TYPES(type, "random_", [&] {
    low = std::numeric_limits<scalar_t>::lowest();
    high = std::numeric_limits<scalar_t>::max();
  });
  return from >= low && to - 1 <= high;
}

// The inclusive upper end of random_() without `to`, as the CPU takes it.
int64_t default_last(c10::ScalarType type) {
  if (type == c10::kBool) return 1;
  if (at::isFloatingType(type))
    return int64_t{1} << (type == c10::kDouble ? 53 : type == c10::kFloat ? 24 : type == c10::kHalf ? 11 : 8);
  int64_t high = 0;
  AT_DISPATCH_INTEGRAL_TYPES(type, "random_", [&] { high = std::numeric_limits<scalar_t>::max(); });
  return high;
}

bool known_type(c10::ScalarType type) {
  return type == c10::kBool || at::isIntegralType(type, false) || type == c10::kFloat || type == c10::kHalf ||
      type == c10::kBFloat16 || type == c10::kDouble;
}

// [from, last] as a half-open range, when it is short enough to draw natively (so `last + 1` cannot
// overflow).
std::optional<int64_t> end_after(int64_t from, int64_t last) {
  if (last < from || static_cast<__int128>(last) - from + 1 > kMaxRange) return std::nullopt;
  return last + 1;
}

bool native_case(const at::Tensor& self, int64_t from, int64_t to) {
  const c10::ScalarType type = self.scalar_type();
  return known_type(type) && from < to && to - from <= kMaxRange && context_of(self).has(runtime::Feature::ShaderInt64) &&
      (type != c10::kDouble || context_of(self).has(runtime::Feature::ShaderF64)) && representable(type, from, to);
}

at::Tensor& fill_integers(at::Tensor& self, int64_t from, int64_t to, const std::optional<at::Generator>& generator) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  const auto draw = [&] {
    at::Tensor unit = at::empty(self.sizes(), self.options().dtype(c10::kFloat));
    unit.uniform_(0.0, 1.0, generator);
    return (unit * static_cast<double>(int64_t{1} << kBits)).to(c10::kLong); // exact: 24-bit values
  };
  const at::Tensor high = draw(), low = draw();
  const at::Tensor bits = high * (int64_t{1} << kBits) + low;
  self.copy_(at::remainder(bits, to - from) + from);
  return self;
}

// random_ over [from, to), or up to the dtype's default end; false where the kernel does not take it.
bool random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<at::Generator> generator) {
  const std::optional<int64_t> end =
      to ? to : known_type(self.scalar_type()) ? end_after(from, default_last(self.scalar_type())) : std::nullopt;
  if (!end || !native_case(self, from, *end)) return false;
  fill_integers(self, from, *end, generator);
  return true;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/random_integer_ops.inc"

} // namespace
} // namespace torch_dml::aten
