// Elementwise ops whose operands the generic builders of the generated registrations do not describe:
// div with a rounding mode (the mode picks the row and the type promotion), clamp with optional or
// tensor bounds (the bounds take part in type promotion), where and masked_fill_ (a bool condition
// beside two values). Their kernels are rows of backend/ops.yaml like every other elementwise op.
#include <ATen/ScalarOps.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/arange_ops.h>
#include <ATen/ops/clamp_max_ops.h>
#include <ATen/ops/clamp_min_ops.h>
#include <ATen/ops/clamp_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/masked_fill_ops.h>
#include <ATen/ops/where_ops.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "aten/elementwise.h"
#include "aten/fallback.h"
#include "kernels/generated/elementwise_ops.h"

namespace torch_dml::aten {
namespace {

namespace ops = kernels::ops;
using elementwise::run;

// ---- div with rounding_mode ----------------------------------------------------------------------

const kernels::ElementwiseOp& div_row(std::optional<c10::string_view> mode) {
  if (!mode) return ops::div;
  if (*mode == "trunc") return ops::div_trunc;
  if (*mode == "floor") return ops::div_floor;
  TORCH_CHECK(false, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
}

// The kernels of this file may decline once the iterator is built (`tries` in native.yaml): each returns
// its output when it ran, nothing when the counted CPU fallback is to take the call.
using Ran = std::optional<at::Tensor>;

Ran ran(bool done, const at::TensorIterator& iter) {
  return done ? Ran(iter.output()) : std::nullopt;
}

// True division promotes integers to float; the rounding modes keep integer dtypes.
Ran div_mode(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
             std::optional<c10::string_view> mode) {
  const kernels::ElementwiseOp& row = div_row(mode);
  at::TensorIterator iter;
  if (mode) iter.build_binary_op(out, self, other);
  else iter.build_binary_float_op(out, self, other);
  return ran(run(row, iter, {}), iter);
}

Ran div_tensor_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  return div_mode(at::Tensor(), self, other, mode);
}

Ran div_out_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode,
                 const at::Tensor& out) {
  return div_mode(out, self, other, mode);
}

// ---- clamp ---------------------------------------------------------------------------------------

// out <- clamp(self, min, max) with whichever bounds are defined (tensors or wrapped scalars); the
// bounds join the type promotion as in ATen's clamp meta functions.
Ran clamp_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& min, const at::Tensor& max) {
  TORCH_CHECK(min.defined() || max.defined(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(true)
      .add_output(out)
      .add_const_input(self)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true);
  // TensorIterator takes one CPU scalar: a second CPU bound travels to the device (a 0-dim upload).
  auto cpu_scalar = [](const at::Tensor& t) { return t.defined() && t.device().is_cpu() && t.dim() == 0; };
  const at::Tensor upper = cpu_scalar(min) && cpu_scalar(max) ? max.to(self.device()) : max;
  if (min.defined()) config.add_const_input(min);
  if (upper.defined()) config.add_const_input(upper);
  at::TensorIterator iter = config.build();
  const kernels::ElementwiseOp& row = !max.defined() ? ops::clamp_min : !min.defined() ? ops::clamp_max : ops::clamp;
  return ran(run(row, iter, {}), iter);
}

// Scalar bounds are kernel parameters (TensorIterator takes one CPU scalar at most); they join the
// type promotion of integer inputs as in ATen's clamp meta function.
Ran clamp_scalar_into(const at::Tensor& out, const at::Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max) {
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "clamp is not supported for complex types");
  c10::ScalarType result = self.scalar_type();
  if (!c10::isFloatingType(result)) {
    at::native::ResultTypeState state = {};
    state = at::native::update_result_type_state(self, state);
    if (min) state = at::native::update_result_type_state(*min, state);
    if (max) state = at::native::update_result_type_state(*max, state);
    result = at::native::result_type(state);
    TORCH_CHECK(result == self.scalar_type() || !out.defined() || !out.is_same(self), "result type ", result,
                " can't be cast to the desired output type ", self.dtype());
  }
  at::TensorIterator iter;
  iter.build_unary_op(out, self.scalar_type() == result ? self : self.to(result));
  const bool done = !max ? run(ops::clamp_min_scalar, iter, {*min})
      : !min             ? run(ops::clamp_max_scalar, iter, {*max})
                         : run(ops::clamp_scalar, iter, {*min, *max});
  return ran(done, iter);
}

at::Tensor unwrap(const std::optional<at::Tensor>& t) {
  return t.has_value() ? *t : at::Tensor();
}

// Each clamp overload is one of these with its output: undefined (functional), self (in place) or out.
Ran clamped(const at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max,
          const at::Tensor& out = at::Tensor()) {
  return clamp_scalar_into(out, self, min, max);
}

Ran clamp_tensor(const at::Tensor& self, const std::optional<at::Tensor>& min, const std::optional<at::Tensor>& max,
                 const at::Tensor& out = at::Tensor()) {
  return clamp_into(out, self, unwrap(min), unwrap(max));
}

Ran clamped_min(const at::Tensor& self, const at::Scalar& bound, const at::Tensor& out = at::Tensor()) {
  return clamp_scalar_into(out, self, bound, std::nullopt);
}

Ran clamp_min_tensor(const at::Tensor& self, const at::Tensor& bound, const at::Tensor& out = at::Tensor()) {
  return clamp_into(out, self, bound, at::Tensor());
}

Ran clamped_max(const at::Tensor& self, const at::Scalar& bound, const at::Tensor& out = at::Tensor()) {
  return clamp_scalar_into(out, self, std::nullopt, bound);
}

Ran clamp_max_tensor(const at::Tensor& self, const at::Tensor& bound, const at::Tensor& out = at::Tensor()) {
  return clamp_into(out, self, at::Tensor(), bound);
}

// ---- where / masked_fill_ ------------------------------------------------------------------------

Ran where_into(const at::Tensor& out, const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(condition.scalar_type() == c10::kBool || condition.scalar_type() == c10::kByte,
              "where expected condition to be a boolean tensor.");
  const c10::ScalarType result = at::result_type(self, other);
  TORCH_CHECK(out.scalar_type() == result, "Expected out type to be ", result, " but got ", out.scalar_type());
  at::TensorIterator iter = at::TensorIteratorConfig()
                                .check_all_same_dtype(false)
                                .allow_cpu_scalars(true)
                                .add_output(out)
                                .add_const_input(condition)
                                .add_const_input(self)
                                .add_const_input(other)
                                .build();
  return ran(run(ops::where, iter, {}, result), iter);
}

c10::Device dml_device_of(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors)
    if (t->device().type() == c10::DeviceType::PrivateUse1) return t->device();
  return tensors.begin()[0]->device();
}

Ran where_new(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor out = at::empty({0}, self.options()
                                            .dtype(at::result_type(self, other))
                                            .device(dml_device_of({&condition, &self, &other})));
  return where_into(out, condition, self, other);
}

Ran masked_fill_into(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  at::TensorIterator iter = at::TensorIteratorConfig()
                                .set_check_mem_overlap(false)
                                .check_all_same_dtype(false)
                                .resize_outputs(false)
                                .allow_cpu_scalars(true)
                                .add_output(self)
                                .add_const_input(mask)
                                .add_const_input(value)
                                .add_const_input(self)
                                .build();
  return ran(run(ops::where, iter, {}, self.scalar_type()), iter);
}

Ran masked_fill_scalar(const at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  return masked_fill_into(self, mask, at::native::wrapped_scalar_tensor(value));
}

Ran masked_fill_tensor(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return masked_fill_into(self, mask, value);
}

// ---- arange --------------------------------------------------------------------------------------

// The output's length and checks as ATen's arange computes them (the difference in int64 for int64).
int64_t arange_size(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, c10::ScalarType type) {
  const double xstart = start.to<double>(), xend = end.to<double>(), xstep = step.to<double>();
  TORCH_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(xstart) && std::isfinite(xend), "unsupported range: ", xstart, " -> ", xend);
  TORCH_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
              "upper bound and larger bound inconsistent with step sign");
  double size;
  if (type == c10::kLong) {
    size = std::ceil(static_cast<double>(end.to<int64_t>() - start.to<int64_t>()) /
                     static_cast<double>(step.to<int64_t>()));
  } else {
    size = std::ceil((xend - xstart) / xstep);
  }
  TORCH_CHECK(size >= 0 && size <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  return static_cast<int64_t>(size);
}

bool arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  const int64_t size = arange_size(start, end, step, out.scalar_type());
  if (out.numel() != size) out.resize_({size});
  if (size == 0) return true;
  // One dispatch (positions restart in each piece of a split launch): 64 MiB fits every adapter's binding.
  if (out.dim() == 1 && out.nbytes() <= (64ull << 20)) {
    at::TensorIterator iter =
        at::TensorIteratorConfig().add_output(out).resize_outputs(false).check_all_same_dtype(false).build();
    return run(ops::arange, iter, {start, step}, out.scalar_type());
  }
  return false;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/elementwise_special_ops.inc"

} // namespace
} // namespace torch_dml::aten
