// Glue between a built at::TensorIterator and the elementwise kernel: the generated registrations
// (aten/generated/elementwise_registrations.cpp) and the hand-written ones both end here.
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/core/Scalar.h>

#include <initializer_list>
#include <optional>

#include "kernels/elementwise_kernel.h"

namespace torch_dml::aten::elementwise {

// Runs `op` over `iter` (operand 0 the output, the rest inputs; CPU scalars become uniforms) with
// parameters s0.. = `params`, computing in `compute` (default: the iterator's common dtype). Returns
// false, having done nothing, when the kernel cannot take it: the caller then runs the CPU fallback.
bool run(const kernels::ElementwiseOp& op, const at::TensorIteratorBase& iter,
         std::initializer_list<c10::Scalar> params, std::optional<c10::ScalarType> compute = std::nullopt);

// Whether every tensor operand has a dtype the kernels compute on. Checked before the iterator is built:
// ATen's own kernels build other iterators for complex inputs (abs, angle: complex in, real out), so the
// CPU fallback must see those calls untouched.
bool kernel_dtype(const at::Tensor& t);
bool kernel_dtype(const c10::Scalar& s);
template <typename... Args>
bool takes(const Args&... args) {
  return (kernel_dtype(args) && ...);
}

// The largest finite value of a floating dtype (nan_to_num's default for +inf); 0 for the others.
double finite_max(c10::ScalarType type);

} // namespace torch_dml::aten::elementwise
