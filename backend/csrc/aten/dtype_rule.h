// The dtype half of a fallback rule (the `dtypes` and `needs` of backend/ops/native.yaml and
// backend/ops/reductions.yaml): which inputs a native kernel computes on, checked by the generated
// kernels before they call it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <initializer_list>

#include "runtime/features.h"

namespace torch_dml::aten {

// Input dtype classes a kernel computes on (the yaml's `dtypes`).
enum DtypeClass : uint32_t {
  kFloatClass = 1, // float32, float16, bfloat16
  kF64Class = 2,
  kIntClass = 4, // int64, int32, int16, int8, uint8
  kBoolClass = 8,
};

// The class of `type`; 0 for the dtypes no kernel computes on (complex, float8, the wide unsigned ones).
uint32_t dtype_class(c10::ScalarType type);

// Whether `t`'s dtype is in `classes` and the adapter has both the feature that dtype needs
// (kernels::dtype_info: shader-f64 for float64, shader-int64 for int64) and every one of `needs`.
bool computes_on(const at::Tensor& t, uint32_t classes, std::initializer_list<runtime::Feature> needs = {});

// Whether the adapter holding `t` has every one of `needs` (a row's `needs` without `dtypes`).
bool adapter_has(const at::Tensor& t, std::initializer_list<runtime::Feature> needs);

} // namespace torch_dml::aten
