// Shared by the selection ops (take, gather, indexing, masked_select, nonzero): the element gather and
// the positions of a mask's set elements, each nullopt when its kernel cannot take the operands (the
// caller then falls back).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace torch_dml::aten {

// src.flatten()[linear] for int64 `linear`, every value in [0, src.numel()).
std::optional<at::Tensor> take_linear(const at::Tensor& src, const at::Tensor& linear);

// The int64 linear positions (ascending) of the nonzero elements of a 1-D `flat` tensor; reads the
// count back to the host once (the result's size depends on it).
std::optional<at::Tensor> set_positions(const at::Tensor& flat);

// The coordinates of linear positions in a contiguous tensor of `sizes`: one int64 tensor per dim.
std::vector<at::Tensor> unravel(const at::Tensor& positions, at::IntArrayRef sizes);

} // namespace torch_dml::aten
