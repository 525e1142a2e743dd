// The copy family: strided device-to-device copies with dtype conversion, and fill. One generated
// kernel per (source dtype or raw bits, destination dtype, rank, store mode); shapes and strides are
// uniform parameters, so a kernel serves every tensor of that rank.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

constexpr int kMaxCopyRank = 8;

// Element counts and strides, dimension 0 varying fastest (TensorIterator's order).
struct CopyGeometry {
  int rank = 0;
  uint64_t numel = 0;
  uint32_t shape[kMaxCopyRank] = {};
  uint32_t src_stride[kMaxCopyRank] = {};
  uint32_t dst_stride[kMaxCopyRank] = {};
};

// Why a native copy between these dtypes cannot run on this device ("" when it can): a missing shader
// feature, a dtype WGSL cannot compute on, a rank above kMaxCopyRank. Operands larger than one storage
// binding are fine: the dispatch is split into windows that fit.
std::string copy_unsupported_reason(runtime::DeviceContext& context, const DeviceTensorRef& dst,
                                    const DeviceTensorRef* src, const CopyGeometry& geometry);

void copy(runtime::DeviceContext& context, const DeviceTensorRef& dst, const DeviceTensorRef& src,
          const CopyGeometry& geometry);

// Writes `bits` (the value already encoded in dst's dtype, little-endian, up to 8 bytes) everywhere.
void fill(runtime::DeviceContext& context, const DeviceTensorRef& dst, uint64_t bits, const CopyGeometry& geometry);

} // namespace torch_dml::kernels
