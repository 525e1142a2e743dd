// Launches over strided operands (copy, fill, elementwise): the iteration space is a shape of up to
// kMaxRank dimensions (dimension 0 varying fastest, TensorIterator's order) and each operand has its
// own strides over it. Here: the layout of that shape and those strides in a Params block, as
// wgsl/lib/strided_index.wgsl reads them, and the split of a launch whose operands do not fit one
// storage binding (or whose element count does not fit 32 bits) into pieces that do.
#pragma once

#include <cstdint>

#include "kernels/launch.h"
#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

// Elements from an operand's first to its last, inclusive: 1 + sum of (shape[d] - 1) * strides[d].
inline uint64_t strided_extent(int rank, const uint32_t* shape, const uint32_t* strides) {
  uint64_t extent = 1;
  for (int d = 0; d < rank; ++d) extent += static_cast<uint64_t>(shape[d] - 1) * strides[d];
  return extent;
}

// Whether an operand's elements lie in iteration order with no gaps.
inline bool strided_dense(int rank, const uint32_t* shape, const uint32_t* strides) {
  uint64_t expected = 1;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// Writes the shape into p.shape and operand `operand`'s strides into p.strides[2 * operand ..], the
// layout of lib/strided_index.wgsl.
template <typename P>
void set_strided_shape(P& p, int rank, const uint32_t* shape) {
  for (int d = 0; d < rank; ++d) p.shape[d / 4][d % 4] = shape[d];
}
template <typename P>
void set_strided_operand(P& p, int operand, int rank, const uint32_t* strides) {
  for (int d = 0; d < rank; ++d) p.strides[2 * operand + d / 4][d % 4] = strides[d];
}

// Calls `run(piece)` on pieces of `piece` that each fit: the slowest-varying dimension longer than 1 is
// halved until every operand fits one binding and the element count fits 32 bits. The pieces run as
// successive dispatches, so a packed word two pieces share is still written safely (each keeps the
// lanes it does not own). Piece has `rank`, `numel`, `shape[]` and `for_each_operand(f)`, which calls
// f(DeviceTensorRef&, const uint32_t* strides) for each operand the launch binds.
template <typename Piece, typename Run>
void run_in_pieces(runtime::DeviceContext& context, Piece piece, Run&& run) {
  if (piece.numel == 0) return;
  bool fits = piece.numel <= 0xFFFFFFFFull;
  piece.for_each_operand([&](DeviceTensorRef& t, const uint32_t* strides) {
    fits = fits && fits_one_binding(context, t, strided_extent(piece.rank, piece.shape, strides));
  });
  int d = piece.rank - 1;
  while (d >= 0 && piece.shape[d] <= 1) --d;
  if (fits || d < 0) {
    run(piece);
    return;
  }
  const uint32_t head = piece.shape[d] / 2;
  Piece first = piece, second = piece;
  first.shape[d] = head;
  second.shape[d] = piece.shape[d] - head;
  first.numel = piece.numel / piece.shape[d] * head;
  second.numel = piece.numel - first.numel;
  second.for_each_operand([&](DeviceTensorRef& t, const uint32_t* strides) {
    t.element_offset += static_cast<uint64_t>(head) * strides[d];
  });
  run_in_pieces(context, first, run);
  run_in_pieces(context, second, run);
}

} // namespace torch_dml::kernels
