// embedding_dense_backward on the device (nn.Embedding's backward reaches it through the composite
// embedding_backward): index_add of grad_output's rows, each sum from 0, deterministic by construction (see
// kernels/index_add_kernel.h), with the padding row left out and scale_grad_by_freq's division. float32
// and float64 equal the CPU bit for bit without scale_grad_by_freq (both add the rows in position
// order); float16 and bfloat16 are summed in float32 and rounded once (the CPU rounds every addition).
//
// Indices outside [0, num_weights) are left out of the sum: the CPU and CUDA kernels do not check
// them either (the forward embedding did), and checking here would cost a read back to the host.
#include <ATen/TensorUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/embedding_dense_backward_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "aten/native_run.h"
#include "aten/index_groups.h"
#include "kernels/index_add_kernel.h"

namespace torch_dml::aten {
namespace {

// The gradient summed per index (nothing where the index_add kernel does not take it: `tries`).
std::optional<at::Tensor> embedding_grad(const at::Tensor& grad_output, const at::Tensor& indices, int64_t num_weights,
                                         int64_t padding_idx, bool scale_grad_by_freq) {
  at::checkScalarTypes("embedding_backward", at::TensorArg(indices, "indices", 2), {c10::kLong, c10::kInt});
  c10::DeviceGuard guard(grad_output.device());
  const int64_t positions = indices.numel();
  const int64_t width = grad_output.size(-1);
  const at::Tensor grad = grad_output.contiguous().view({positions, width});
  if (num_weights * width == 0 || positions == 0) return at::zeros({num_weights, width}, grad.options());
  // Every element is written (rows no index names get 0): no zero fill first.
  at::Tensor result = at::empty({num_weights, width}, grad.options());
  const IndexGroups groups = index_groups(indices, num_weights, padding_idx);
  kernels::IndexAddProblem problem;
  problem.op = "embedding_dense_backward";
  problem.inner = static_cast<uint64_t>(width);
  problem.from_zero = true;
  problem.divide_by_count = scale_grad_by_freq;
  problem.sort = groups.sort;
  problem.source = device_ref(grad);
  problem.out = device_ref(result);
  if (!run_native(context_of(grad_output), problem, &kernels::index_add_unsupported_reason, &kernels::index_add))
    return std::nullopt;
  return result;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/embedding_backward_ops.inc"

} // namespace
} // namespace torch_dml::aten
