// The fallback rule of every reduction in backend/ops/reductions.yaml, which the generated registrations
// (aten/generated/reduce_registrations.cpp) check before calling a row's kernel entry.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <initializer_list>

#include "aten/dtype_rule.h"
#include "runtime/features.h"

namespace torch_dml::aten::reductions {

// Whether the reduce kernel takes `self` reduced over `dims` (all dims when absent): its dtype is in
// `classes`, the adapter has `needs` and what the dtype needs, and the input fits one binding or, beyond
// one, is contiguous and reduced over trailing dims (or all of them), since the kernel then binds, per
// dispatch, just the rows or row slices that dispatch reads.
bool takes(const at::Tensor& self, at::OptionalIntArrayRef dims, uint32_t classes,
           std::initializer_list<runtime::Feature> needs);

} // namespace torch_dml::aten::reductions
