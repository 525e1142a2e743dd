// The ops every PrivateUse1 backend must provide (PyTorch's accelerator "minimum operator set"):
// allocation, views and storage plumbing. None of them touches tensor data.
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "runtime/allocator.h"

namespace torch_dml::aten {
namespace {

c10::Device resolve_device(std::optional<c10::Device> device) {
  c10::Device where = device.value_or(c10::Device(c10::DeviceType::PrivateUse1));
  if (where.index() < 0) where = c10::impl::getDeviceGuardImpl(where.type())->getDevice();
  return where;
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!layout || *layout == c10::Layout::Strided, "torch_dml: only strided tensors are supported, got ",
              *layout);
  TORCH_CHECK(!pin_memory || !*pin_memory, "torch_dml: pin_memory applies to CPU tensors only");
  const c10::Device where = resolve_device(device);
  const c10::ScalarType type = c10::dtype_or_default(dtype);
  check_dtype_supported(runtime::device_context(where.index()), type, "empty");
  c10::DeviceGuard guard(where);
  return at::detail::empty_generic(size, &runtime::device_allocator(),
                                   c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), type, memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  TORCH_CHECK(!layout || *layout == c10::Layout::Strided, "torch_dml: only strided tensors are supported, got ",
              *layout);
  const c10::Device where = resolve_device(device);
  const c10::ScalarType type = c10::dtype_or_default(dtype);
  check_dtype_supported(runtime::device_context(where.index()), type, "empty_strided");
  c10::DeviceGuard guard(where);
  return at::detail::empty_strided_generic(size, stride, &runtime::device_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), type);
}

void grow_to_fit(at::TensorImpl* impl) {
  const size_t needed = at::detail::computeStorageNbytes(impl->sizes(), impl->strides(), impl->dtype().itemsize(),
                                                         impl->storage_offset());
  grow_storage(impl->unsafe_storage().unsafeGetStorageImpl(), needed);
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  at::TensorImpl* impl = self.unsafeGetTensorImpl();
  at::native::resize_impl_cpu_(impl, size, std::nullopt, /*resize_storage=*/false);
  if (memory_format) {
    TORCH_CHECK(*memory_format != c10::MemoryFormat::Preserve, "torch_dml: unsupported memory format ",
                *memory_format);
    impl->empty_tensor_restride(*memory_format);
  }
  grow_to_fit(impl);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t storage_offset, c10::IntArrayRef size,
                        c10::IntArrayRef stride) {
  at::native::checkSetStorage(self, source, storage_offset, size, stride);
  self.unsafeGetTensorImpl()->set_storage_offset(storage_offset);
  const at::OptionalIntArrayRef strides = stride.data() ? at::OptionalIntArrayRef(stride) : std::nullopt;
  at::native::resize_impl_cpu_(self.unsafeGetTensorImpl(), size, strides, /*resize_storage=*/false);
  grow_to_fit(self.unsafeGetTensorImpl());
  return self;
}

// Without a kernel, Tensor.record_stream reaches the CPU fallback, which has none either. The
// allocator hears of it (a no-op today: every stream of a device is one queue).
void record_stream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1, "torch_dml: record_stream on a dml tensor ",
              "needs a dml stream, got a stream of ", stream.device(), "; pass torch.dml.current_stream()");
  runtime::device_allocator().recordStream(self.storage().data_ptr(), stream);
}

bool has_compatible_shallow_copy_type(const at::Tensor&, const at::Tensor&) {
  // `cpu_param.data = dml_tensor` (and the reverse) swaps TensorImpls, which is sound for plain
  // dense tensors on either side.
  return true;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/minimal_ops.inc"

} // namespace
} // namespace torch_dml::aten
