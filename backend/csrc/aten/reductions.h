// The fallback rule of every reduction in backend/ops/reductions.yaml, which the generated registrations
// (aten/generated/reduce_registrations.cpp) check before calling a row's kernel entry.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <initializer_list>

#include "runtime/features.h"

namespace torch_dml::aten::reductions {

// Input dtype classes a row computes on (the yaml's `dtypes`).
enum DtypeClass : uint32_t {
  kFloatClass = 1, // float32, float16, bfloat16
  kF64Class = 2,
  kIntClass = 4, // int64, int32, int16, int8, uint8
  kBoolClass = 8,
};

// Whether the reduce kernel takes `self` reduced over `dims` (all dims when absent): its dtype is in
// `classes`, the adapter has `needs` and what the dtype needs, and the input fits one binding or, beyond
// one, is contiguous and reduced over trailing dims (or all of them), since the kernel then binds, per
// dispatch, just the rows or row slices that dispatch reads.
bool takes(const at::Tensor& self, at::OptionalIntArrayRef dims, uint32_t classes,
           std::initializer_list<runtime::Feature> needs);

} // namespace torch_dml::aten::reductions
