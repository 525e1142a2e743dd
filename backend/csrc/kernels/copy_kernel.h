// The copy family: strided device-to-device copies with dtype conversion, and fill (wgsl/copy.wgsl,
// wgsl/fill.wgsl). One variant per (source dtype or raw bits, destination dtype, rank, store);
// shapes and strides are uniform parameters, so a variant serves every tensor of its rank.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

constexpr int kMaxCopyRank = kMaxRank;

// Element counts and strides, dimension 0 varying fastest (TensorIterator's order).
struct CopyGeometry {
  int rank = 0;
  uint64_t numel = 0;
  uint32_t shape[kMaxRank] = {};
  uint32_t src_stride[kMaxRank] = {};
  uint32_t dst_stride[kMaxRank] = {};
};

// Why a native copy between these dtypes cannot run on this device ("" when it can): a missing shader
// feature, a dtype WGSL cannot compute on, a rank above kMaxRank. Operands larger than one storage
// binding are fine: the dispatch is split into pieces that fit (kernels/split.h).
std::string copy_unsupported_reason(runtime::DeviceContext& context, const DeviceTensorRef& dst,
                                    const DeviceTensorRef* src, const CopyGeometry& geometry);

void copy(runtime::DeviceContext& context, const DeviceTensorRef& dst, const DeviceTensorRef& src,
          const CopyGeometry& geometry);

// Writes `bits` (the value already encoded in dst's dtype, little-endian, up to 8 bytes) everywhere.
void fill(runtime::DeviceContext& context, const DeviceTensorRef& dst, uint64_t bits, const CopyGeometry& geometry);

} // namespace torch_dml::kernels
