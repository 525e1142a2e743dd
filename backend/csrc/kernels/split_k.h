// Split-K, shared by the GEMM (matmul_kernel.cpp) and conv2d's grad_weight (conv_kernel.cpp): an output
// of few tiles over a long K leaves most of a large GPU idle (a 64x8192x64 product is one workgroup
// walking all of K), so K is cut into slices, one workgroup per (tile, slice), each writing its partial
// tile into a scratch buffer that gemm_split_sum.wgsl adds up in slice order.
#pragma once

#include <cstdint>

#include "runtime/device.h"

namespace torch_dml::kernels {

// How many slices of how many K elements a problem runs in; one slice is the plain one-pass kernel.
struct SplitPlan {
  uint64_t slices = 1;
  uint64_t depth = 0;
};

// What the slice count weighs: the output tiles over all batches (or groups), K, the batches each slice
// repeats in a dispatch's z, the bytes of one slice's partials, and the kernel's own depths.
struct SplitProblem {
  uint64_t tiles = 0, k = 0, batches = 1, bytes_per_slice = 0;
  uint64_t min_slice_depth = 0; // each slice's workgroup also stores a whole partial tile
  uint64_t min_split_depth = 0; // below it one workgroup's walk costs about what a second dispatch does
};

// Slices enough to give the largest GPUs work, within one storage binding of partials and one
// dispatch's z; 1 when a split is not worth it. Before the rounding of their depth (round_slices).
uint64_t split_k_slices(runtime::DeviceContext& context, const SplitProblem& s);

// K cut into `slices` slices that start on multiples of `step`: their depth, and how many remain once
// the depth is rounded up (none left empty).
inline SplitPlan round_slices(uint64_t k, uint64_t slices, uint64_t step) {
  const uint64_t depth = ((k + slices - 1) / slices + step - 1) / step * step;
  return {(k + depth - 1) / depth, depth};
}

} // namespace torch_dml::kernels
