// Shared by the selection ops (take, gather, indexing, masked_select, nonzero): the element gather and
// the positions of a mask's set elements, each nullopt when its kernel cannot take the operands (the
// caller then falls back).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string_view>

namespace torch_dml::aten {

// src.flatten()[linear] for int64 `linear`, every value in [0, src.numel()).
std::optional<at::Tensor> take_linear(const at::Tensor& src, const at::Tensor& linear);

// The int64 linear positions (ascending) of the nonzero elements of a 1-D `flat` tensor; reads the
// count back to the host once (the result's size depends on it).
std::optional<at::Tensor> set_positions(const at::Tensor& flat);

// out.flatten()[linear] = values (broadcast to linear's shape), the last write winning where positions
// repeat; `out` contiguous and on a word boundary, `linear` int64 in [0, out.numel()). False when the
// kernel cannot take the operands (nothing is written then).
bool put_linear(at::Tensor& out, const at::Tensor& linear, const at::Tensor& values);

// out.flatten()[linear[i]] (op)= values[i] folded per position in position order: reduce is scatter_reduce's
// "sum", "prod", "mean", "amax" or "amin"; include_self folds out's old value in. `out` contiguous,
// `linear` int64 in [0, out.numel()). False when the kernel cannot take the operands (nothing written).
bool reduce_at_positions(at::Tensor& out, const at::Tensor& linear, const at::Tensor& values,
                         std::string_view reduce, bool include_self);

// Every value of each `indices[i]` must lie in [low[i], high[i]); checked on the device, a failure
// raising IndexError at the next wait, or at the op when it `writes` into an existing tensor
// (aten/index_range.h).
void check_ranges(const std::vector<at::Tensor>& indices, const std::vector<int64_t>& low,
                  const std::vector<int64_t>& high, const char* op, bool writes);

// Positions along one dim of a contiguous tensor (stride `stride`, ascending or reversed), shaped to
// broadcast along axis `axis` of a result of rank `rank`.
at::Tensor axis_offsets(int64_t size, int64_t stride, int64_t axis, int64_t rank, const at::TensorOptions& options,
                        bool reversed = false);

// The coordinates of linear positions in a contiguous tensor of `sizes`: one int64 tensor per dim.
std::vector<at::Tensor> unravel(const at::Tensor& positions, at::IntArrayRef sizes);

} // namespace torch_dml::aten
