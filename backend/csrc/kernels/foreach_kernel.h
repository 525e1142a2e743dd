// The multi-tensor launch of the _foreach_* ops (kernels/tensor_slots.h): one op of backend/ops.yaml
// applied to every tensor of a list, as many tensors per dispatch as the adapter's bindings allow. Every tensor operand is
// contiguous, of one dtype (float32, float16 or bfloat16) and starts on a u32 word.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

// Operands per tensor: the output and up to three inputs.
constexpr uint32_t kForeachMaxOperands = 4;

// Where an input of the expression (a, b, c or s0) comes from: an operand of the tensor, a scalar of
// the call (index 0 or 1), the tensor's own scalar (ScalarList overloads), or a constant.
enum class ForeachSource : uint8_t { Zero, One, Operand, Scalar, Listed };

struct ForeachInput {
  ForeachSource source = ForeachSource::Zero;
  uint32_t index = 0; // the operand, or the call's scalar
};

struct ForeachTensor {
  uint64_t count = 0;                         // elements
  DeviceTensorRef operands[kForeachMaxOperands]; // 0 the output, then the tensor inputs
  float listed = 0;                           // the tensor's own scalar
};

struct ForeachProblem {
  const char* op = "";        // names the launch in errors
  const char* kernel = "";    // the row's name, naming the compiled variants
  const char* expression = ""; // the row's WGSL over a, b, c and s0 in T = f32
  c10::ScalarType dtype = c10::kFloat;
  uint32_t operands = 1;      // per tensor
  ForeachInput inputs[4];     // a, b, c, s0
  float scalars[2] = {0, 0};
  std::vector<ForeachTensor> tensors;
};

// Plans every launch of the problem: "" when all can run (then records them), or why not (nothing
// recorded).
std::string foreach_run(runtime::DeviceContext& context, const ForeachProblem& problem);

} // namespace torch_dml::kernels
