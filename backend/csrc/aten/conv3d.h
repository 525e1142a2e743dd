// conv3d (video and volumetric models) as one 2-D convolution on the conv kernels: the kernel's depth
// taps are folded into the input channels. Output depth d reads input depths d * stride + k * dilation
// (k < KD) of the depth-padded input; gathered as channels (k, c) of an image (n, d), the depth sum is
// part of the 2-D convolution's reduction over channels, with the weight's (c, k) reordered to match:
// one implicit GEMM, accumulated in float32, at the cost of a copy of the input KD times over. The
// backward passes are that convolution's, with the input gradient's depth taps added back in place.
// conv_transpose3d is conv3d's input gradient (as conv_transpose2d is conv2d's), its gradients conv3d's
// forward and weight passes.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <optional>
#include <tuple>

namespace torch_dml::aten {

// Whether conv3d_forward / conv3d_backward take the convolution (a 5-D float32/float16/bfloat16 one
// with valid strides, paddings and dilations; not transposed).
bool native_conv3d(const at::Tensor& input, const at::Tensor& weight, bool transposed, at::IntArrayRef stride,
                   at::IntArrayRef padding, at::IntArrayRef dilation);

at::Tensor conv3d_forward(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                          at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups);

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv3d_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask);

// Whether conv_transpose3d_forward / _backward take it: native_conv3d's dtypes and ranks, output
// padding below the stride (past it, allowed below the dilation, the CPU's).
bool native_conv_transpose3d(const at::Tensor& input, const at::Tensor& weight, bool transposed, at::IntArrayRef stride,
                             at::IntArrayRef padding, at::IntArrayRef dilation, at::IntArrayRef output_padding);

at::Tensor conv_transpose3d_forward(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef output_padding,
                                    at::IntArrayRef dilation, int64_t groups);

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv_transpose3d_backward(
    const at::Tensor& grad_output, const at::Tensor& x, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask);

} // namespace torch_dml::aten
