// Reflection and replication padding (1-d, 2-d and 3-d, forward and backward) as index_select along each
// padded dim with the source position of every output position (computed on the host: one short int64
// vector per dim), and the backward as index_add along the same dims in reverse order, which sums every
// gradient that came from one input position in position order: deterministic, no atomics. Every dtype
// index_select and index_add take natively runs natively; cases the CPU refuses (padding too large,
// wrong rank) go to it for its error.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/reflection_pad1d_backward_ops.h>
#include <ATen/ops/reflection_pad1d_ops.h>
#include <ATen/ops/reflection_pad2d_backward_ops.h>
#include <ATen/ops/reflection_pad2d_ops.h>
#include <ATen/ops/reflection_pad3d_backward_ops.h>
#include <ATen/ops/reflection_pad3d_ops.h>
#include <ATen/ops/replication_pad1d_backward_ops.h>
#include <ATen/ops/replication_pad1d_ops.h>
#include <ATen/ops/replication_pad2d_backward_ops.h>
#include <ATen/ops/replication_pad2d_ops.h>
#include <ATen/ops/replication_pad3d_backward_ops.h>
#include <ATen/ops/replication_pad3d_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

enum class PadMode { Reflect, Replicate };

// The input position each output position of one dim reads: the output spans [-before, size + after).
std::vector<int64_t> source_positions(PadMode mode, int64_t size, int64_t before, int64_t after) {
  std::vector<int64_t> positions;
  for (int64_t i = -before; i < size + after; ++i) {
    int64_t j = i;
    if (mode == PadMode::Replicate) {
      j = std::clamp<int64_t>(i, 0, size - 1);
    } else if (i < 0) {
      j = -i;
    } else if (i >= size) {
      j = 2 * (size - 1) - i;
    }
    positions.push_back(j);
  }
  return positions;
}

// Whether the padding is one the CPU kernel accepts for `dims` padded dims (else it is the CPU's to
// refuse, with its own message): a batched or unbatched input, every output dim at least 1, reflection
// pads smaller than the dim they reflect, replication over non-empty dims.
bool takes(PadMode mode, int dims, const at::Tensor& input, at::IntArrayRef padding) {
  if (static_cast<int>(padding.size()) != 2 * dims || (input.dim() != dims + 1 && input.dim() != dims + 2))
    return false;
  // The CPU kernels take no bool (and raise for it).
  if (input.scalar_type() == c10::kBool) return false;
  // An empty batch is fine; an empty padded dim is the CPU's to refuse.
  for (int d = 1; d < input.dim(); ++d)
    if (input.size(d) == 0) return false;
  for (int k = 0; k < dims; ++k) {
    const int64_t size = input.size(input.dim() - 1 - k);
    const int64_t before = padding[2 * k], after = padding[2 * k + 1];
    // A negative pad crops; reflection reflects at most size - 1 positions either side.
    if (size + before + after < 1) return false;
    if (mode == PadMode::Reflect && (before >= size || after >= size)) return false;
  }
  return true;
}

// The int64 positions for the padded dim counted k from the last, on `device`.
at::Tensor positions_tensor(PadMode mode, const at::Tensor& input, at::IntArrayRef padding, int k) {
  const int64_t size = input.size(input.dim() - 1 - k);
  std::vector<int64_t> positions = source_positions(mode, size, padding[2 * k], padding[2 * k + 1]);
  return at::tensor(positions, at::TensorOptions().dtype(c10::kLong)).to(input.device());
}

at::Tensor padded(PadMode mode, int dims, const at::Tensor& input, at::IntArrayRef padding) {
  c10::DeviceGuard guard(input.device());
  if (input.numel() == 0) {
    std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
    for (int k = 0; k < dims; ++k) shape[input.dim() - 1 - k] += padding[2 * k] + padding[2 * k + 1];
    return at::empty(shape, input.options());
  }
  at::Tensor out = input;
  for (int k = 0; k < dims; ++k) out = out.index_select(input.dim() - 1 - k, positions_tensor(mode, input, padding, k));
  return out.contiguous();
}

at::Tensor padded_backward(PadMode mode, int dims, const at::Tensor& grad_output, const at::Tensor& input,
                           at::IntArrayRef padding) {
  c10::DeviceGuard guard(input.device());
  if (input.numel() == 0) return at::zeros(input.sizes(), grad_output.options());
  at::Tensor grad = grad_output;
  for (int k = dims - 1; k >= 0; --k) {
    const int64_t d = input.dim() - 1 - k;
    std::vector<int64_t> shape(grad.sizes().begin(), grad.sizes().end());
    shape[d] = input.size(d);
    grad = at::zeros(shape, grad.options()).index_add_(d, positions_tensor(mode, input, padding, k), grad);
  }
  return grad;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/pad_ops.inc"

} // namespace
} // namespace torch_dml::aten
