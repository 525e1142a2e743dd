// Glue between ATen tensors and the kernel layer: where a tensor's bytes live, which device it is on,
// and the dtype checks every op makes before it records work.
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>

#include "kernels/copy_kernel.h"
#include "kernels/image_operand.h"
#include "runtime/device.h"

namespace torch_dml::aten {

runtime::DeviceContext& context_of(const at::Tensor& tensor);

// The tensor's buffer and first element (its storage offset included).
kernels::DeviceTensorRef device_ref(const at::Tensor& tensor);
kernels::DeviceTensorRef device_ref(const void* data, c10::ScalarType dtype);

// A 4-D tensor as an image kernel's operand: its buffer and its strides.
kernels::ImageOperand image_operand(const at::Tensor& tensor);

// Throws a clear error when the adapter cannot hold `dtype` (float64 without shader-f64).
void check_dtype_supported(runtime::DeviceContext& context, c10::ScalarType dtype, const char* op);

// Element shape and strides of a built iterator: operand 0 is the destination, operand 1 (if any) the
// source. Returns false when the iterator does not fit the kernels' limits (rank, 32-bit strides).
bool copy_geometry(const at::TensorIteratorBase& iter, kernels::CopyGeometry& geometry);

// out <- result for an out= overload computed through its functional form: out is resized as
// PyTorch's out= rules say, then receives the values (converted to its dtype).
void assign_out(const at::Tensor& out, const at::Tensor& result);

// Grows a dml storage to at least `nbytes`, keeping its contents (the ATen CPU helpers would memcpy
// device addresses).
void grow_storage(c10::StorageImpl* storage, size_t nbytes);

} // namespace torch_dml::aten
