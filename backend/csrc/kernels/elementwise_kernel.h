// The elementwise family: out[i] = expr(a[i], b[i], c[i], s0..s4) over a TensorIterator's operands,
// every operand with its own dtype and strides (no input copies, no casts: values are converted while
// loaded and stored). One variant of wgsl/elementwise.wgsl (any strides) or wgsl/elementwise_quad.wgsl
// (dense, four elements per thread) per (op, computation type, operand dtypes, rank, store mode);
// shapes, strides and scalars are uniform parameters.
#pragma once

#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

constexpr int kMaxElementwiseInputs = 3;
constexpr int kMaxElementwiseParams = 5;

constexpr uint32_t dtype_bit(c10::ScalarType type) {
  return 1u << static_cast<int>(type);
}

// One row of backend/ops.yaml, as generated into kernels/generated/elementwise_ops.h.
struct ElementwiseOp {
  const char* name;
  // WGSL expressions over inputs a, b, c, parameters s0..s4 and the computation type T, one per class
  // of computation type; nullptr where the op has none (that class runs on the CPU fallback).
  const char* float_expr;
  const char* int_expr;
  const char* bool_expr; // bool computation (logical ops, and bool tensors when given)
  bool result_bool;      // the expression yields bool rather than T
  bool logical;          // inputs are read as bool whatever their dtype
  uint32_t dtypes;       // computation dtypes the op takes (dtype_bit); others go to the CPU fallback
  const char* inputs_as; // per input, 'b' to read it as bool (where's condition), '.' for T
};

struct ElementwiseInput {
  DeviceTensorRef tensor; // unused for a scalar
  bool is_scalar = false;
  c10::Scalar value;      // a CPU scalar operand (a Python number or a 0-dim CPU tensor)
};

// Operand 0 is the output; operands 1.. the inputs. Dimension 0 varies fastest (TensorIterator order).
struct ElementwiseProblem {
  const ElementwiseOp* op = nullptr;
  c10::ScalarType compute = c10::kFloat; // the dtype the arithmetic is defined in (f16/bf16 run in f32)
  DeviceTensorRef out;
  int input_count = 0;
  ElementwiseInput inputs[kMaxElementwiseInputs];
  int param_count = 0;
  c10::Scalar params[kMaxElementwiseParams];
  int rank = 0;
  uint64_t numel = 0;
  uint32_t shape[kMaxRank] = {};
  uint32_t strides[1 + kMaxElementwiseInputs][kMaxRank] = {};

  // The operands a launch binds, with their strides (kernels/split.h).
  template <typename F>
  void for_each_operand(F&& f) {
    f(out, strides[0]);
    for (int k = 0; k < input_count; ++k)
      if (!inputs[k].is_scalar) f(inputs[k].tensor, strides[k + 1]);
  }
};

// Why the kernel cannot run this problem on this device ("" when it can): no expression for the
// computation type, a dtype WGSL cannot compute on, a missing shader feature.
std::string elementwise_unsupported_reason(runtime::DeviceContext& context, const ElementwiseProblem& problem);

// Runs the problem; throws (naming op, dtype and adapter) when the kernel cannot. The caller holds
// the device lock.
void elementwise(runtime::DeviceContext& context, const ElementwiseProblem& problem);

// Runs the problem and returns true, or returns false without recording anything when the kernel
// cannot run it (the caller then takes the CPU fallback). The caller holds the device lock.
bool try_elementwise(runtime::DeviceContext& context, const ElementwiseProblem& problem);

} // namespace torch_dml::kernels
