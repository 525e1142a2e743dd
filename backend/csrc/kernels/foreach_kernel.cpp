#include "kernels/foreach_kernel.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/tensor_slots.h"
#include "kernels/wgsl_family.h"
#include "kernels/word_lanes.h"

namespace torch_dml::kernels {
namespace {

uint32_t float_bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

const char* const kOffsetLane[kForeachMaxOperands] = {"x", "y", "z", "w"};

// Words a thread updates (foreach.wgsl's WORDS_PER_THREAD): one op is a load and a store or two, too
// little beside a thread's slot lookup (4x slower per element on lavapipe with one word).
constexpr uint32_t kWordsPerThread = 4;

// The WGSL of an expression input.
std::string input_text(const ForeachInput& in) {
  switch (in.source) {
    case ForeachSource::Zero: return "0.0f";
    case ForeachSource::One: return "1.0f";
    case ForeachSource::Operand: return "lane_value(word_" + std::to_string(in.index) + ", lane)";
    case ForeachSource::Scalar: return "bitcast<f32>(p.scalar" + std::to_string(in.index) + ")";
    case ForeachSource::Listed: return "listed";
  }
  return "?";
}

bool reads_operand(const ForeachProblem& pr, uint32_t k) {
  return std::any_of(std::begin(pr.inputs), std::end(pr.inputs),
                     [k](const ForeachInput& in) { return in.source == ForeachSource::Operand && in.index == k; });
}

// The variant's name: family, row, dtype, slots, operands and where each input comes from.
std::string kernel_name(const ForeachProblem& pr, const Lanes& lanes, uint32_t slots) {
  std::string name = std::string("foreach/") + pr.kernel + "/" + lanes.name + "/s" + std::to_string(slots) + "x" +
      std::to_string(pr.operands) + "/";
  for (const ForeachInput& in : pr.inputs) {
    name += "z1osl"[static_cast<int>(in.source)];
    if (in.source == ForeachSource::Operand || in.source == ForeachSource::Scalar) name += std::to_string(in.index);
  }
  return name;
}

const char* const kOperandNames[kForeachMaxOperands] = {"0", "1", "2", "3"};

// `wide`: the device's float32 helpers may compute in float64 (fixed per device, so not in the name).
std::string source_code(const ForeachProblem& pr, const Lanes& lanes, uint32_t slots, bool wide) {
  const std::span<const char* const> names(kOperandNames, pr.operands);
  std::string loads;
  for (uint32_t k = 0; k < pr.operands; ++k)
    if (reads_operand(pr, k))
      loads += "    let word_" + std::to_string(k) + " = load_" + std::to_string(k) + "(slot, offsets." +
          kOffsetLane[k] + " + w);\n";
  const std::string expression = substitute_type(pr.expression, "f32");
  return render(wgsl::foreach,
                {{"bindings", slot_bindings(slots, names)},
                 {"params_binding", std::to_string(slots * pr.operands)},
                 {"workgroup_size", std::to_string(kWorkgroupSize)},
                 {"words_per_thread", std::to_string(kWordsPerThread)},
                 {"accessors", slot_accessors(slots, names)},
                 {"helpers", math_helpers(expression, Value::F32, wide)},
                 {"lanes", std::to_string(lanes.per_word)},
                 {"decode", lanes.decode},
                 {"encode", lanes.encode},
                 {"loads", loads},
                 {"out_word", reads_operand(pr, 0) ? "word_0" : "kept_word(slot, offsets.x + w, w, count)"},
                 {"a", input_text(pr.inputs[0])},
                 {"b", input_text(pr.inputs[1])},
                 {"c", input_text(pr.inputs[2])},
                 {"s0", input_text(pr.inputs[3])},
                 {"expression", expression}});
}

struct Chunk {
  Launch launch;
  wgsl::ForeachParams params{};
  uint64_t groups = 0;
};

// One launch over `tensors` (at most `slots`, none empty); a launch with fewer binds its first tensor's
// operands again in the slots it leaves, which no workgroup reads, so every chunk shares one variant.
Chunk plan_chunk(runtime::DeviceContext& context, const ForeachProblem& pr, const Lanes& lanes, uint32_t slots,
                 const ForeachTensor* tensors, uint32_t used) {
  Chunk chunk{Launch(context, pr.op, pr.dtype)};
  wgsl::ForeachParams& p = chunk.params;
  p.slots = used;
  p.scalar0 = float_bits(pr.scalars[0]);
  p.scalar1 = float_bits(pr.scalars[1]);
  for (uint32_t s = 0; s < slots; ++s) {
    const ForeachTensor& t = tensors[s < used ? s : 0];
    chunk.launch.require_u32(t.count, "elements");
    for (uint32_t k = 0; k < pr.operands; ++k) {
      const DeviceTensorRef& ref = t.operands[k];
      chunk.launch.require(ref.dtype == pr.dtype, "operands of different dtypes");
      const uint32_t offset = chunk.launch.bind(ref, t.count);
      chunk.launch.require(offset % lanes.per_word == 0, "a packed operand that does not start on a u32 word");
      if (s < used) p.offsets[s][k] = offset / lanes.per_word;
    }
    if (s >= used) continue;
    const uint64_t words = (t.count + lanes.per_word - 1) / lanes.per_word;
    const uint64_t groups = groups_for((words + kWordsPerThread - 1) / kWordsPerThread);
    // The last slot's index arithmetic also serves the grid's spare workgroups (fewer than 65536).
    chunk.launch.require_u32((chunk.groups + groups + 65536) * kWorkgroupSize * kWordsPerThread, "threads");
    p.slot[s][0] = static_cast<uint32_t>(chunk.groups);
    p.slot[s][1] = static_cast<uint32_t>(t.count);
    p.slot[s][2] = float_bits(t.listed);
    chunk.groups += groups;
  }
  return chunk;
}

} // namespace

std::string foreach_run(runtime::DeviceContext& context, const ForeachProblem& pr) {
  const std::optional<Lanes> lanes = lanes_of(pr.dtype);
  if (!lanes) return "a dtype other than float32, float16 or bfloat16";
  if (pr.operands < 1 || pr.operands > kForeachMaxOperands) return "more operands per tensor than the kernel takes";
  std::vector<ForeachTensor> tensors;
  for (const ForeachTensor& t : pr.tensors)
    if (t.count) tensors.push_back(t); // an empty tensor has no buffer to bind
  if (tensors.empty()) return "";
  const uint32_t slots = slots_for(context, pr.operands);
  std::vector<Chunk> chunks;
  for (size_t first = 0; first < tensors.size(); first += slots) {
    const uint32_t used = static_cast<uint32_t>(std::min<size_t>(slots, tensors.size() - first));
    chunks.push_back(plan_chunk(context, pr, *lanes, slots, &tensors[first], used));
    if (!chunks.back().launch.ok()) return chunks.back().launch.reason();
  }
  const std::string name = kernel_name(pr, *lanes, slots);
  const bool wide = wide_float32_math(context);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  for (Chunk& chunk : chunks)
    chunk.launch.run(name, [&] { return source_code(pr, *lanes, slots, wide); }, chunk.params, chunk.groups);
  return "";
}

} // namespace torch_dml::kernels
