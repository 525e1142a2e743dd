#include "aten/common.h"

#include <ATen/native/Resize.h>
#include <c10/core/StorageImpl.h>

#include <limits>

#include "runtime/allocator.h"

namespace torch_dml::aten {

runtime::DeviceContext& context_of(const at::Tensor& tensor) {
  TORCH_INTERNAL_ASSERT(tensor.device().type() == c10::DeviceType::PrivateUse1);
  return runtime::device_context(tensor.device().index());
}

kernels::DeviceTensorRef device_ref(const void* data, c10::ScalarType dtype) {
  const runtime::BufferSpan span = runtime::device_allocator().resolve(data);
  const size_t itemsize = c10::elementSize(dtype);
  TORCH_INTERNAL_ASSERT(span.offset % itemsize == 0, "torch_dml: misaligned ", dtype, " pointer");
  return kernels::DeviceTensorRef{span.buffer, span.buffer_size, span.offset / itemsize, dtype};
}

kernels::DeviceTensorRef device_ref(const at::Tensor& tensor) {
  return device_ref(tensor.const_data_ptr(), tensor.scalar_type());
}

void check_dtype_supported(runtime::DeviceContext& context, c10::ScalarType dtype, const char* op) {
  TORCH_CHECK_TYPE(dtype != c10::kDouble || context.has(runtime::Feature::ShaderF64), "torch_dml: ", op,
                   ": float64 tensors need the shader-f64 feature, which ", context.describe(),
                   " does not have. Use float32, or pick an adapter with float64 support "
                   "(torch_dml.has_float64_support(i); TORCH_DML_ADAPTERS selects adapters).");
}

bool copy_geometry(const at::TensorIteratorBase& iter, kernels::CopyGeometry& geometry) {
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  geometry = {};
  geometry.rank = iter.ndim();
  geometry.numel = static_cast<uint64_t>(iter.numel());
  if (geometry.rank > kernels::kMaxRank || geometry.numel > kMax) return false;
  const auto shape = iter.shape();
  const int64_t dst_item = iter.element_size(0);
  const int64_t src_item = iter.ntensors() > 1 ? iter.element_size(1) : 1;
  for (int d = 0; d < geometry.rank; ++d) {
    const int64_t dst_stride = iter.strides(0)[d] / dst_item;
    const int64_t src_stride = iter.ntensors() > 1 ? iter.strides(1)[d] / src_item : 0;
    if (shape[d] < 0 || static_cast<uint64_t>(shape[d]) > kMax || dst_stride < 0 || src_stride < 0 ||
        static_cast<uint64_t>(dst_stride) > kMax || static_cast<uint64_t>(src_stride) > kMax)
      return false;
    geometry.shape[d] = static_cast<uint32_t>(shape[d]);
    geometry.dst_stride[d] = static_cast<uint32_t>(dst_stride);
    geometry.src_stride[d] = static_cast<uint32_t>(src_stride);
  }
  return true;
}

kernels::ImageOperand image_operand(const at::Tensor& tensor) {
  kernels::ImageOperand op{device_ref(tensor)};
  for (int d = 0; d < 4; ++d) op.strides[d] = tensor.stride(d);
  return op;
}

void assign_out(const at::Tensor& out, const at::Tensor& result) {
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
}

void grow_storage(c10::StorageImpl* storage, size_t nbytes) {
  if (nbytes > storage->nbytes()) runtime::resize_storage_bytes(storage, nbytes);
}

} // namespace torch_dml::aten
