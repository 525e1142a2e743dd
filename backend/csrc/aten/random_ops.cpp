// uniform_, normal_, bernoulli_ and native_dropout on the Philox kernel, drawing from the dml
// generator (torch.dml.manual_seed): each call takes one fresh Philox offset.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/bernoulli_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/native_dropout_ops.h>
#include <ATen/ops/normal_ops.h>
#include <ATen/ops/uniform_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "kernels/random_kernel.h"
#include "runtime/generator.h"

namespace torch_dml::aten {
namespace {

using kernels::RandomKind;

std::pair<uint64_t, uint64_t> draw_key(const std::optional<at::Generator>& generator, int device) {
  auto* philox = at::get_generator_or_default<runtime::PhiloxGenerator>(generator, runtime::default_generator(device));
  std::lock_guard<std::mutex> lock(philox->mutex_);
  return {philox->current_seed(), philox->advance(1)};
}

// self <- random values of `kind` (converted to self's dtype and layout).
at::Tensor& fill_random(at::Tensor& self, RandomKind kind, float a, float b, const std::optional<at::Generator>& gen) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  runtime::DeviceContext& context = context_of(self);
  const bool direct = self.scalar_type() == c10::kFloat && self.is_contiguous();
  at::Tensor target = direct ? self : at::empty({self.numel()}, self.options().dtype(c10::kFloat));
  const auto [seed, offset] = draw_key(gen, self.device().index());
  kernels::RandomProblem problem;
  problem.kind = kind;
  problem.numel = static_cast<uint64_t>(self.numel());
  problem.seed = seed;
  problem.offset = offset;
  problem.a = a;
  problem.b = b;
  problem.out = device_ref(target);
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::random_fill(context, problem);
  }
  if (!direct) self.copy_(target.view(self.sizes()));
  return self;
}

at::Tensor& uniform(at::Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  return fill_random(self, RandomKind::Uniform, static_cast<float>(from), static_cast<float>(to), gen);
}

at::Tensor& normal(at::Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  return fill_random(self, RandomKind::Normal, static_cast<float>(mean), static_cast<float>(std), gen);
}

at::Tensor& bernoulli(at::Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  return fill_random(self, RandomKind::Bernoulli, static_cast<float>(p), 0.0f, gen);
}

std::tuple<at::Tensor, at::Tensor> dropout_forward(const at::Tensor& input, double p, std::optional<bool> train) {
  c10::DeviceGuard guard(input.device());
  if (train.has_value() && !*train) {
    at::Tensor mask = at::empty(input.sizes(), input.options().dtype(c10::kBool));
    mask.fill_(true);
    return {input.clone(), mask};
  }
  TORCH_CHECK(0 <= p && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  const at::Tensor x = input.contiguous();
  at::Tensor out = at::empty({x.numel()}, x.options().dtype(c10::kFloat));
  at::Tensor keep = at::empty({x.numel()}, x.options().dtype(c10::kInt));
  if (x.numel()) {
    const auto [seed, offset] = draw_key(std::nullopt, input.device().index());
    kernels::RandomProblem problem;
    problem.kind = RandomKind::Dropout;
    problem.numel = static_cast<uint64_t>(x.numel());
    problem.seed = seed;
    problem.offset = offset;
    problem.a = static_cast<float>(1.0 - p);
    problem.b = p < 1 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
    problem.out = device_ref(out);
    problem.mask = device_ref(keep);
    problem.input = device_ref(x);
    runtime::DeviceContext& context = context_of(input);
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::random_fill(context, problem);
  }
  return {out.view(input.sizes()).to(input.scalar_type()), keep.view(input.sizes()).to(c10::kBool)};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/random_ops.inc"

} // namespace
} // namespace torch_dml::aten
