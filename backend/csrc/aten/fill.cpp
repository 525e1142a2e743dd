// fill_ and zero_ on the copy family's fill kernel: the value is encoded once on the host in the
// tensor's own dtype (PyTorch's conversion rules), then its bits are written everywhere.
#include <ATen/Dispatch_v2.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/fill_ops.h>
#include <ATen/ops/zero_ops.h>
#include <torch/library.h>

#include <cstring>

#include "aten/common.h"
#include "aten/fallback.h"

namespace torch_dml::aten {
namespace {

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  if (self.numel() == 0) return self;
  auto iter = at::TensorIteratorConfig()
                  .add_output(self)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .build();
  // The value in the tensor's dtype, by c10's conversion rules (what a CPU fill_ would store).
  uint64_t bits = 0;
  AT_DISPATCH_V2(self.scalar_type(), "fill_", AT_WRAP([&] {
    const scalar_t converted = value.to<scalar_t>();
    static_assert(sizeof(converted) <= sizeof(bits));
    std::memcpy(&bits, &converted, sizeof(converted));
  }), AT_EXPAND(AT_ALL_TYPES), AT_EXPAND(AT_FLOAT8_TYPES), AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES), c10::kComplexHalf,
     c10::kComplexFloat, c10::kHalf, c10::kBFloat16, c10::kBool);
  kernels::CopyGeometry geometry;
  TORCH_CHECK(copy_geometry(iter, geometry), "torch_dml: fill_: tensor shape beyond the kernel's 32-bit limits");
  runtime::DeviceContext& context = context_of(self);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernels::fill(context, device_ref(iter.data_ptr(0), self.scalar_type()), bits, geometry);
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  return fill_scalar(self, value.item());
}

at::Tensor& zero(at::Tensor& self) {
  return fill_scalar(self, 0);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/fill.inc"

} // namespace
} // namespace torch_dml::aten
