#include "kernels/optimizer_kernel.h"

#include <algorithm>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/tensor_slots.h"
#include "kernels/wgsl_family.h"
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

// Steps of one launch: at most `slots` parameters, all of one dtype, none empty.
template <typename Step>
std::vector<std::vector<const Step*>> chunks_of(std::span<const Step> steps, uint32_t slots) {
  std::vector<std::vector<const Step*>> chunks;
  for (const Step& s : steps) {
    if (s.count == 0) continue; // an empty tensor has no buffer to bind
    if (chunks.empty() || chunks.back().size() == slots || chunks.back().front()->param.dtype != s.param.dtype)
      chunks.emplace_back();
    chunks.back().push_back(&s);
  }
  return chunks;
}

// An optional operand the variant leaves out: accessors that touch nothing, for code it never runs.
std::string absent_operand(const char* name) {
  return std::string("fn load_") + name + "(slot: u32, i: u32) -> u32 { return 0u; }\nfn store_" + name +
      "(slot: u32, i: u32, v: u32) {}\n";
}

template <typename P>
struct Chunk {
  Launch launch;
  c10::ScalarType dtype;
  P params{};
  uint64_t groups = 0;
};

// Binds the chunk's slots: `bind_slot(launch, step, per_word, with_optional, slot, params)` binds one
// step's operands in the family's order (its optional operand too when `with_optional`) and records
// their offsets in `params` (null past the chunk's steps); slots past the chunk's steps bind its first
// step again, which no workgroup reads, so every chunk of a call shares one variant. Then the shared
// device scalars, and the slot table's workgroups and elements, over the fields `shared` gives.
template <typename P, typename Step, typename BindSlot>
Chunk<P> plan_chunk(runtime::DeviceContext& context, const char* op, const std::vector<const Step*>& steps,
                    uint32_t slots, BindSlot&& bind_slot, bool with_optional, const P& shared) {
  const c10::ScalarType type = steps.front()->param.dtype;
  Chunk<P> chunk{Launch(context, op, type), type, shared};
  Launch& launch = chunk.launch;
  const auto lanes = lanes_of(type);
  launch.require(lanes.has_value(), "a dtype other than float32, float16 or bfloat16");
  const uint32_t per_word = lanes ? lanes->per_word : 1;
  P& p = chunk.params;
  p.slots = static_cast<uint32_t>(steps.size());
  for (uint32_t s = 0; s < slots; ++s) {
    const Step& step = *steps[s < steps.size() ? s : 0];
    launch.require_u32(step.count, "elements");
    bind_slot(launch, step, per_word, with_optional, s, s < steps.size() ? &p : nullptr);
    if (s >= steps.size()) continue;
    const uint64_t groups = groups_for((step.count + per_word - 1) / per_word);
    // The last slot's index arithmetic also serves the grid's spare workgroups (fewer than 65536).
    launch.require_u32((chunk.groups + groups + 65536) * kWorkgroupSize, "threads");
    p.slot[s][0] = static_cast<uint32_t>(chunk.groups);
    p.slot[s][1] = static_cast<uint32_t>(step.count);
    chunk.groups += groups;
  }
  const Step& first = *steps.front();
  bind_scalars(launch, first.scalars, first.param, p);
  return chunk;
}

// Records every chunk once all are planned. The variant is the family, the dtype, the slots and the
// options (each a WGSL constant, in the order given, spelled 0/1 in the pipeline's name).
template <typename P>
std::string record_chunks(runtime::DeviceContext& context, std::vector<Chunk<P>>& chunks, const wgsl::Family& family,
                          uint32_t slots, std::span<const char* const> operands, const char* optional_operand,
                          bool with_optional, std::span<const std::pair<const char*, bool>> options) {
  for (const Chunk<P>& c : chunks)
    if (!c.launch.ok()) return c.launch.reason();
  if (chunks.empty()) return "";
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  for (Chunk<P>& chunk : chunks) {
    const Lanes lanes = *lanes_of(chunk.dtype);
    std::string name = std::string(family.name) + "/" + lanes.name + "/s" + std::to_string(slots) + "/";
    const uint32_t bound = slots * static_cast<uint32_t>(operands.size());
    std::vector<Hole> holes{{"lanes", std::to_string(lanes.per_word)},
                            {"decode", lanes.decode},
                            {"encode", lanes.encode},
                            {"workgroup_size", std::to_string(kWorkgroupSize)},
                            {"bindings", slot_bindings(slots, operands)},
                            {"accessors", slot_accessors(slots, operands) +
                                 (with_optional ? std::string() : absent_operand(optional_operand))},
                            {"scalars_binding", std::to_string(bound)},
                            {"params_binding", std::to_string(bound + 1)}};
    for (const auto& [option, on] : options) {
      name += on ? '1' : '0';
      holes.push_back({option, on ? "true" : "false"});
    }
    chunk.launch.run(name, [&] { return render(family, holes); }, chunk.params, chunk.groups);
  }
  return "";
}

// Plans and records a call's steps: chunks of at most the slots the adapter binds (plan_chunk, with
// `bind_slot`), each starting from `shared`, the Params fields one call's steps share (the first
// step's hyperparameters); then record_chunks with the optimizer's own options followed by those
// every fused optimizer has.
template <typename P, typename Step, typename BindSlot>
std::string run_steps(runtime::DeviceContext& context, const char* op, std::span<const Step> steps, const P& shared,
                      BindSlot&& bind_slot, const wgsl::Family& family, std::span<const char* const> operands,
                      const char* optional_operand, bool with_optional,
                      std::initializer_list<std::pair<const char*, bool>> own_options) {
  const Step& first = steps.front();
  std::vector<std::pair<const char*, bool>> options(own_options);
  options.insert(options.end(), {{"maximize", first.maximize},
                                 {"weight_decay", first.weight_decay != 0},
                                 {"lr_tensor", first.scalars.lr.has_value()},
                                 {"scale", first.scalars.scale.has_value()},
                                 {"found_inf", first.scalars.found_inf.has_value()}});
  const uint32_t slots = slots_for(context, static_cast<uint32_t>(operands.size()), 1);
  std::vector<Chunk<P>> chunks;
  for (const auto& group : chunks_of(steps, slots))
    chunks.push_back(plan_chunk<P>(context, op, group, slots, bind_slot, with_optional, shared));
  return record_chunks(context, chunks, family, slots, operands, optional_operand, with_optional, options);
}

// An Adam step's operands, in fused_adam.wgsl's order.
void bind_adam(Launch& launch, const AdamStep& s, uint32_t per_word, bool amsgrad, uint32_t slot,
               wgsl::FusedAdamParams* p) {
  const c10::ScalarType type = s.param.dtype;
  const uint32_t words[4] = {bind_words(launch, s.param, s.count, type, per_word),
                             bind_words(launch, s.grad, s.count, type, per_word),
                             bind_words(launch, s.exp_avg, s.count, type, per_word),
                             bind_words(launch, s.exp_avg_sq, s.count, type, per_word)};
  launch.require(s.step.dtype == c10::kFloat, "a step count that is not float32");
  const uint32_t step = launch.bind(s.step, 1);
  uint32_t max_word = 0;
  if (amsgrad) {
    launch.require(s.max_exp_avg_sq.has_value(), "amsgrad state for some parameters only");
    max_word = bind_words(launch, s.max_exp_avg_sq.value_or(s.exp_avg_sq), s.count, type, per_word);
  }
  if (!p) return;
  std::copy(std::begin(words), std::end(words), p->offsets[slot]);
  p->slot[slot][2] = max_word;
  p->slot[slot][3] = step;
}

// An SGD step's operands, in fused_sgd.wgsl's order.
void bind_sgd(Launch& launch, const SgdStep& s, uint32_t per_word, bool momentum, uint32_t slot,
              wgsl::FusedSgdParams* p) {
  const uint32_t param = bind_words(launch, s.param, s.count, s.param.dtype, per_word);
  const uint32_t grad = bind_words(launch, s.grad, s.count, s.param.dtype, per_word);
  uint32_t buffer = 0;
  if (momentum) {
    launch.require(s.momentum_buffer.has_value(), "momentum buffers for some parameters only");
    buffer = bind_words(launch, s.momentum_buffer.value_or(s.param), s.count, s.param.dtype, per_word);
  }
  if (!p) return;
  p->offsets[slot][0] = param;
  p->offsets[slot][1] = grad;
  p->offsets[slot][2] = buffer;
}

// The Params fields a call's steps share, from its first step.
wgsl::FusedAdamParams hyperparameters(const AdamStep& s) {
  return {.lr = static_cast<float>(s.lr),
          .beta1 = static_cast<float>(s.beta1),
          .beta2 = static_cast<float>(s.beta2),
          .one_minus_beta1 = static_cast<float>(1.0 - s.beta1),
          .one_minus_beta2 = static_cast<float>(1.0 - s.beta2),
          .weight_decay = static_cast<float>(s.weight_decay),
          .decay = static_cast<float>(1.0 - s.lr * s.weight_decay),
          .eps = static_cast<float>(s.eps)};
}

wgsl::FusedSgdParams hyperparameters(const SgdStep& s) {
  return {.lr = static_cast<float>(s.lr),
          .weight_decay = static_cast<float>(s.weight_decay),
          .momentum = static_cast<float>(s.momentum),
          .one_minus_dampening = static_cast<float>(1.0 - s.dampening)};
}

const char* const kAdamOperands[] = {"param", "grad", "exp_avg", "exp_avg_sq", "step", "max_exp_avg_sq"};
const char* const kSgdOperands[] = {"param", "grad", "momentum_buffer"};

} // namespace

std::string adam_steps(runtime::DeviceContext& context, std::span<const AdamStep> steps) {
  if (steps.empty()) return "";
  const AdamStep& first = steps.front();
  const bool amsgrad = first.max_exp_avg_sq.has_value();
  return run_steps(context, first.adamw ? "_fused_adamw_" : "_fused_adam_", steps, hyperparameters(first), bind_adam,
                   wgsl::fused_adam, std::span(kAdamOperands, amsgrad ? 6 : 5), "max_exp_avg_sq", amsgrad,
                   {{"amsgrad", amsgrad}, {"adamw", first.adamw}});
}

std::string sgd_steps(runtime::DeviceContext& context, std::span<const SgdStep> steps) {
  if (steps.empty()) return "";
  const SgdStep& first = steps.front();
  const bool momentum = first.momentum_buffer.has_value();
  return run_steps(context, "_fused_sgd_", steps, hyperparameters(first), bind_sgd, wgsl::fused_sgd,
                   std::span(kSgdOperands, momentum ? 3 : 2), "momentum_buffer", momentum,
                   {{"momentum", momentum}, {"first_step", first.first_step}, {"nesterov", first.nesterov}});
}

} // namespace torch_dml::kernels
