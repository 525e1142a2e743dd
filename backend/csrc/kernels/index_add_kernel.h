// index_add and embedding_dense_backward on the device, deterministic: the positions are grouped by
// index with the counting sort of index_sort_kernel.h, then each element of out adds its group's
// terms in position order (in float32 for float32/float16/bfloat16, float64 for float64; int32 and
// int64 in themselves, the 1- and 2-byte integers in int32, wrapping; bool or-ed). A thread owns whole
// words of out, so no two threads store into one word.
#pragma once

#include <c10/core/Scalar.h>

#include <cstdint>
#include <string>

#include "kernels/index_sort_kernel.h"

namespace torch_dml::kernels {

// How a group's terms fold: index_add sums; scatter_reduce / index_reduce also take products, maxima
// and minima (a NaN among them wins, as on the CPU) and means.
enum class IndexFold { Sum, Prod, Max, Min, Mean };

struct IndexAddProblem {
  const char* op = "index_add";  // for errors
  IndexFold fold = IndexFold::Sum;
  bool fold_out = true;          // out's old value (or 0 with from_zero) starts each fold; else its first term
  uint64_t outer = 1;            // out viewed as [outer, rows, inner]; rows = sort.buckets
  uint64_t inner = 1;
  c10::Scalar alpha = 1;
  bool from_zero = false;        // out's old values are not read: every element is written (embedding)
  bool divide_by_count = false;  // embedding's scale_grad_by_freq (with from_zero)
  IndexSortProblem sort;         // positions = source.size(dim)
  DeviceTensorRef source;        // [outer, positions, inner], contiguous, out's dtype
  DeviceTensorRef out;           // contiguous, starting on a word; added to in place
};

std::string index_add_unsupported_reason(runtime::DeviceContext& context, const IndexAddProblem& problem);
void index_add(runtime::DeviceContext& context, const IndexAddProblem& problem);

} // namespace torch_dml::kernels
