#include "kernels/generated_kernel.h"

#include <c10/util/Exception.h>

#include <atomic>
#include <cstring>

#include "kernels/elementwise_math.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

std::atomic<uint64_t> g_launches{0};

// Tensors one generated kernel binds: the WebGPU default of maxStorageBuffersPerShaderStage, which every
// adapter has (torch_dml/compile/wgsl_kernel.py's MAX_OPERANDS).
constexpr size_t kMaxGeneratedOperands = 8;
static_assert(kMaxGeneratedOperands <= Launch::kMaxOperands);

// The offsets block is array<vec4<u32>, 2>: uniform arrays keep a 16-byte stride.
constexpr size_t kOffsetsBytes = 4 * kMaxGeneratedOperands;

// One fixed-size block for every generated kernel (Launch::run binds sizeof(Params)); a kernel's own
// Params struct may be shorter than the bound range.
struct Params {
  uint8_t bytes[256];
};

} // namespace

void launch_generated(runtime::DeviceContext& context, const std::string& name, const std::string& source,
                      const std::vector<GeneratedOperand>& operands, const std::string& scalars, uint64_t groups) {
  TORCH_CHECK(operands.size() <= kMaxGeneratedOperands, "torch_dml: generated kernel ", name, " binds ",
              operands.size(), " tensors; at most ", kMaxGeneratedOperands, " fit one kernel");
  const c10::ScalarType dtype = operands.empty() ? c10::kFloat : operands.front().ref.dtype;
  Launch launch(context, name, dtype);
  TORCH_CHECK(scalars.size() <= sizeof(Params) - kOffsetsBytes, "torch_dml: generated kernel ", name, " takes ",
              scalars.size(), " bytes of scalars; at most ", sizeof(Params) - kOffsetsBytes,
              " fit its uniform block");
  Params params{};
  std::memcpy(params.bytes + kOffsetsBytes, scalars.data(), scalars.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    const uint32_t offset = launch.bind(operands[i].ref, operands[i].extent);
    std::memcpy(params.bytes + 4 * i, &offset, 4);
  }
  // pipeline() names the kernel and adapter and attaches the source when naga rejects it.
  // The helpers come from the eager kernels' pools, so a fused op computes what its eager kernel does.
  launch.run(
      name, [&] { return source + "\n" + math_helpers(source, Value::F32, wide_float32_math(context)); }, params,
      groups);
  ++g_launches;
}

uint64_t generated_launch_count() {
  return g_launches.load();
}

} // namespace torch_dml::kernels
