// exponential_ and multinomial composed of native ops over the device's Philox stream (uniform_):
// token sampling in a generation loop (torch.multinomial(probs, 1)) no longer leaves the device.
// multinomial without replacement (and any draw of one sample) takes the largest p / q over an
// exponential q, the "exponential race" CUDA's kernel also uses; with replacement, the count of
// cumulative sums at or below a uniform draw scaled to the row's total (one comparison per category:
// draws go in chunks so the comparison tensor stays bounded). The distribution is the CPU's; the
// values are not (the CPU draws from mt19937), so tests check frequencies, not samples.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/exponential_ops.h>
#include <ATen/ops/multinomial_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

// -log(1 - u) / lambda for u uniform in [0, 1). u = 0 would give 0, which no exponential variate takes
// (and which makes the race's p / q infinite for a zero p): it is raised to the smallest normal value.
at::Tensor& exponential(at::Tensor& self, double lambda, std::optional<at::Generator> generator) {
  TORCH_CHECK(lambda > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambda);
  c10::DeviceGuard guard(self.device());
  const c10::ScalarType compute = self.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  at::Tensor u = at::empty(self.sizes(), self.options().dtype(compute));
  u.uniform_(0.0, 1.0, generator);
  at::Tensor x = at::log1p(u.neg_()).neg_().div_(lambda);
  const double tiny = compute == c10::kDouble ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  x.clamp_min_(tiny);
  self.copy_(x);
  return self;
}

// The CPU kernel's checks, from one read: every probability finite and >= 0, each row's sum > 0, and
// (without replacement) at least n categories with a nonzero probability per row.
void check_distribution(const at::Tensor& rows, int64_t n, bool replacement) {
  const at::Tensor stats = at::stack({at::amin(rows).to(c10::kDouble), at::isfinite(rows).all().to(c10::kDouble),
                                      at::amin(rows.sum(-1)).to(c10::kDouble),
                                      at::amin((rows != 0).sum(-1)).to(c10::kDouble)})
                               .cpu();
  const double* s = stats.data_ptr<double>();
  TORCH_CHECK(s[1] != 0 && s[0] >= 0, "probability tensor contains either `inf`, `nan` or element < 0");
  TORCH_CHECK(s[2] > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  TORCH_CHECK(replacement || s[3] >= n,
              "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)");
}

// Comparisons per chunk of draws with replacement: bounds the [rows, draws, categories] temporary.
constexpr int64_t kCompareBudget = int64_t{1} << 26;

at::Tensor sample(const at::Tensor& self, int64_t n, bool replacement, std::optional<at::Generator> generator) {
  const int64_t categories = self.size(-1);
  TORCH_CHECK(categories > 0, "multinomial: number of categories cannot be zero");
  TORCH_CHECK(n > 0, "multinomial: cannot sample n_sample <= 0 samples");
  TORCH_CHECK(replacement || n <= categories, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                                              "without replacement");
  const c10::ScalarType compute = self.scalar_type() == c10::kDouble ? c10::kDouble : c10::kFloat;
  const at::Tensor rows = self.to(compute).reshape({-1, categories});
  check_distribution(rows, n, replacement);
  at::Tensor picked;
  if (!replacement || n == 1) {
    at::Tensor q = at::empty(rows.sizes(), rows.options());
    q.exponential_(1.0, generator);
    const at::Tensor keys = rows / q;
    picked = n == 1 ? keys.argmax(-1, true) : std::get<1>(keys.topk(n, -1, true, true));
  } else {
    const at::Tensor cdf = rows.cumsum(-1);
    const at::Tensor total = cdf.narrow(-1, categories - 1, 1);
    const int64_t chunk = std::max<int64_t>(1, kCompareBudget / std::max<int64_t>(1, rows.size(0) * categories));
    std::vector<at::Tensor> parts;
    for (int64_t first = 0; first < n; first += chunk) {
      const int64_t draws = std::min(chunk, n - first);
      at::Tensor u = at::empty({rows.size(0), draws}, rows.options());
      u.uniform_(0.0, 1.0, generator);
      const at::Tensor target = (u * total).unsqueeze(-1);
      // A category whose cumulative sum is at or below the target lies before the drawn one; rounding
      // can never carry the count past the last category with a nonzero probability.
      parts.push_back((cdf.unsqueeze(1) <= target).sum(-1).clamp_max_(categories - 1));
    }
    picked = parts.size() == 1 ? parts[0] : at::cat(parts, -1);
  }
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end() - 1);
  shape.push_back(n);
  return picked.to(c10::kLong).reshape(shape);
}

at::Tensor draw_samples(const at::Tensor& self, int64_t n, bool replacement, std::optional<at::Generator> generator) {
  c10::DeviceGuard guard(self.device());
  return sample(self, n, replacement, generator);
}

// A distribution or a batch of them (the CPU kernel raises for the rest).
bool distributions(const at::Tensor& self) {
  return self.dim() == 1 || self.dim() == 2;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/multinomial_ops.inc"

} // namespace
} // namespace torch_dml::aten
