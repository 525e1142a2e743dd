// Fused scaled-dot-product attention (kernels/wgsl/attention.wgsl): the forward with its logsumexp,
// and the backward as two passes (delta = rowsum(P * dP) and dQ, then dK and dV), for (batch, heads)
// problems whose rows are at most kAttentionMaxHeadDim long. Operands are read in place through their strides (the
// last dimension contiguous); results are float32.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"

namespace torch_dml::kernels {

constexpr int64_t kAttentionMaxHeadDim = 128;

enum class AttentionPass { Forward, BackwardQuery, BackwardKeyValue };

// A (batch, head, row, element) operand: its element strides (the element stride is 1, a mask's
// column stride aside) and `extent`, the elements from ref.element_offset its indices reach.
struct AttentionOperand {
  DeviceTensorRef ref;
  uint64_t batch = 0, head = 0, row = 0, col = 1;
  uint64_t extent = 0;
  bool defined() const { return ref.buffer != nullptr; }
};

struct AttentionProblem {
  AttentionPass pass = AttentionPass::Forward;
  uint64_t batch = 0, heads = 0, q_len = 0, k_len = 0, qk_dim = 0, v_dim = 0;
  float scale = 1.0f;
  bool causal = false;
  AttentionOperand q, k, v; // float32, float16 or bfloat16, one dtype
  AttentionOperand mask;    // optional, (batch, head, q_len, k_len) through broadcast strides: bool or float
  AttentionOperand out;     // forward: float32, written
  AttentionOperand dout;    // backward: the output's gradient, q's dtype
  DeviceTensorRef lse;      // float32 (batch * heads, q_len) contiguous: written forward, read backward
  // Backward: float32 contiguous, dQ then delta (batch * heads * q_len) for BackwardQuery; dK then dV
  // for BackwardKeyValue, which reads delta from `delta`.
  DeviceTensorRef result;
  DeviceTensorRef delta;
};

// Why the kernel cannot take the problem on this adapter ("" when it can).
std::string attention_unsupported_reason(runtime::DeviceContext& context, const AttentionProblem& problem);
void attention(runtime::DeviceContext& context, const AttentionProblem& problem);

} // namespace torch_dml::kernels
