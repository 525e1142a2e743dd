#include "kernels/optimizer_kernel.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/word_lanes.h"

namespace torch_dml::kernels {
namespace {

// Binds one more operand of the parameter's dtype and shape; returns its first word in its window.
uint32_t bind_words(Launch& launch, const DeviceTensorRef& t, uint64_t count, c10::ScalarType type,
                    uint32_t per_word) {
  launch.require(t.dtype == type, "operands of different dtypes");
  const uint32_t offset = launch.bind(t, count);
  launch.require(offset % per_word == 0, "a packed operand that does not start on a u32 word");
  return offset / per_word;
}

// Binds the device scalars, or `stand_in` (never read) when there are none.
template <typename P>
void bind_scalars(Launch& launch, const DeviceScalars& s, const DeviceTensorRef& stand_in, P& p) {
  if (s.values) {
    launch.require(s.values->dtype == c10::kFloat, "device scalars that are not float32");
    const uint32_t used = std::max({s.lr.value_or(0), s.scale.value_or(0), s.found_inf.value_or(0)}) + 1;
    p.scalars_offset = launch.bind(*s.values, used);
  } else {
    p.scalars_offset = 0;
    launch.bind(stand_in, 1);
  }
  p.lr_index = s.lr.value_or(0);
  p.scale_index = s.scale.value_or(0);
  p.found_inf_index = s.found_inf.value_or(0);
}

// Records one step. The variant is the family, the dtype and the options (each a WGSL constant, in the
// order given, spelled 0/1 in the pipeline's name).
template <typename Plan>
void run_step(Plan& plan, const wgsl::Family& family, c10::ScalarType type,
              std::initializer_list<std::pair<const char*, bool>> options) {
  const Lanes lanes = *lanes_of(type);
  std::string name = std::string(family.name) + "/" + lanes.name + "/";
  std::vector<Hole> holes{{"lanes", std::to_string(lanes.per_word)},
                          {"decode", lanes.decode},
                          {"encode", lanes.encode},
                          {"workgroup_size", std::to_string(kWorkgroupSize)}};
  for (const auto& [option, on] : options) {
    name += on ? '1' : '0';
    holes.push_back({option, on ? "true" : "false"});
  }
  plan.launch.run(name, [&] { return render(family, holes); }, plan.params, groups_for(plan.params.words));
}

struct AdamPlan {
  Launch launch;
  wgsl::FusedAdamParams params;
};

AdamPlan plan(runtime::DeviceContext& context, const AdamStep& s) {
  const c10::ScalarType type = s.param.dtype;
  AdamPlan plan{Launch(context, s.adamw ? "_fused_adamw_" : "_fused_adam_", type), {}};
  Launch& launch = plan.launch;
  const auto lanes = lanes_of(type);
  launch.require(lanes.has_value(), "a dtype other than float32, float16 or bfloat16");
  const uint32_t per_word = lanes ? lanes->per_word : 1;
  const uint64_t words = (s.count + per_word - 1) / per_word;
  launch.require_u32(s.count, "elements");
  wgsl::FusedAdamParams& p = plan.params;
  p.count = static_cast<uint32_t>(s.count);
  p.words = static_cast<uint32_t>(words);
  p.param_offset = bind_words(launch, s.param, s.count, type, per_word);
  p.grad_offset = bind_words(launch, s.grad, s.count, type, per_word);
  p.exp_avg_offset = bind_words(launch, s.exp_avg, s.count, type, per_word);
  p.exp_avg_sq_offset = bind_words(launch, s.exp_avg_sq, s.count, type, per_word);
  p.max_exp_avg_sq_offset = bind_words(launch, s.max_exp_avg_sq.value_or(s.exp_avg_sq), s.count, type, per_word);
  launch.require(s.step.dtype == c10::kFloat, "a step count that is not float32");
  p.step_offset = launch.bind(s.step, 1);
  bind_scalars(launch, s.scalars, s.step, p);
  p.lr = static_cast<float>(s.lr);
  p.beta1 = static_cast<float>(s.beta1);
  p.beta2 = static_cast<float>(s.beta2);
  p.one_minus_beta1 = static_cast<float>(1.0 - s.beta1);
  p.one_minus_beta2 = static_cast<float>(1.0 - s.beta2);
  p.weight_decay = static_cast<float>(s.weight_decay);
  p.decay = static_cast<float>(1.0 - s.lr * s.weight_decay);
  p.eps = static_cast<float>(s.eps);
  return plan;
}

struct SgdPlan {
  Launch launch;
  wgsl::FusedSgdParams params;
};

SgdPlan plan(runtime::DeviceContext& context, const SgdStep& s) {
  const c10::ScalarType type = s.param.dtype;
  SgdPlan plan{Launch(context, "_fused_sgd_", type), {}};
  Launch& launch = plan.launch;
  const auto lanes = lanes_of(type);
  launch.require(lanes.has_value(), "a dtype other than float32, float16 or bfloat16");
  const uint32_t per_word = lanes ? lanes->per_word : 1;
  launch.require_u32(s.count, "elements");
  wgsl::FusedSgdParams& p = plan.params;
  p.count = static_cast<uint32_t>(s.count);
  p.words = static_cast<uint32_t>((s.count + per_word - 1) / per_word);
  p.param_offset = bind_words(launch, s.param, s.count, type, per_word);
  p.grad_offset = bind_words(launch, s.grad, s.count, type, per_word);
  p.buffer_offset = bind_words(launch, s.momentum_buffer.value_or(s.param), s.count, type, per_word);
  bind_scalars(launch, s.scalars, s.param, p);
  p.lr = static_cast<float>(s.lr);
  p.weight_decay = static_cast<float>(s.weight_decay);
  p.momentum = static_cast<float>(s.momentum);
  p.one_minus_dampening = static_cast<float>(1.0 - s.dampening);
  return plan;
}

} // namespace

std::string adam_step_unsupported_reason(runtime::DeviceContext& context, const AdamStep& step) {
  return plan(context, step).launch.reason();
}

void adam_step(runtime::DeviceContext& context, const AdamStep& s) {
  AdamPlan plan = kernels::plan(context, s);
  run_step(plan, wgsl::fused_adam, s.param.dtype,
           {{"amsgrad", s.max_exp_avg_sq.has_value()},
            {"adamw", s.adamw},
            {"maximize", s.maximize},
            {"weight_decay", s.weight_decay != 0},
            {"lr_tensor", s.scalars.lr.has_value()},
            {"scale", s.scalars.scale.has_value()},
            {"found_inf", s.scalars.found_inf.has_value()}});
}

std::string sgd_step_unsupported_reason(runtime::DeviceContext& context, const SgdStep& step) {
  return plan(context, step).launch.reason();
}

void sgd_step(runtime::DeviceContext& context, const SgdStep& s) {
  SgdPlan plan = kernels::plan(context, s);
  run_step(plan, wgsl::fused_sgd, s.param.dtype,
           {{"momentum", s.momentum_buffer.has_value()},
            {"first_step", s.first_step},
            {"nesterov", s.nesterov},
            {"maximize", s.maximize},
            {"weight_decay", s.weight_decay != 0},
            {"lr_tensor", s.scalars.lr.has_value()},
            {"scale", s.scalars.scale.has_value()},
            {"found_inf", s.scalars.found_inf.has_value()}});
}

} // namespace torch_dml::kernels
