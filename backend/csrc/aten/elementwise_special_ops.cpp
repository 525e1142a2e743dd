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

// True division promotes integers to float; the rounding modes keep integer dtypes.
bool div_mode(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
              std::optional<c10::string_view> mode, at::TensorIterator& iter) {
  const kernels::ElementwiseOp& row = div_row(mode);
  if (mode) iter.build_binary_op(out, self, other);
  else iter.build_binary_float_op(out, self, other);
  return run(row, iter, {});
}

at::Tensor div_tensor_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  at::TensorIterator iter;
  if (div_mode(at::Tensor(), self, other, mode, iter)) return iter.output();
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::div_Tensor_mode>::call(self, other, mode);
}

at::Tensor& div__tensor_mode(at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  at::TensorIterator iter;
  if (div_mode(self, self, other, mode, iter)) return self;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::div__Tensor_mode>::call(self, other, mode);
}

at::Tensor& div_out_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode,
                         at::Tensor& out) {
  at::TensorIterator iter;
  if (div_mode(out, self, other, mode, iter)) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::div_out_mode>::call(self, other, mode, out);
}

// ---- clamp ---------------------------------------------------------------------------------------

// out <- clamp(self, min, max) with whichever bounds are defined (tensors or wrapped scalars); the
// bounds join the type promotion as in ATen's clamp meta functions.
bool clamp_into(at::Tensor& out, const at::Tensor& self, const at::Tensor& min, const at::Tensor& max) {
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
  if (!run(row, iter, {})) return false;
  if (!out.defined()) out = iter.output();
  return true;
}

// Scalar bounds are kernel parameters (TensorIterator takes one CPU scalar at most); they join the
// type promotion of integer inputs as in ATen's clamp meta function.
bool clamp_scalar_into(at::Tensor& out, const at::Tensor& self, const std::optional<at::Scalar>& min,
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
  if (done && !out.defined()) out = iter.output();
  return done;
}

at::Tensor unwrap(const std::optional<at::Tensor>& t) {
  return t.has_value() ? *t : at::Tensor();
}

at::Tensor clamp(const at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max) {
  at::Tensor out;
  if (clamp_scalar_into(out, self, min, max)) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::clamp>::call(self, min, max);
}

at::Tensor& clamp_(at::Tensor& self, const std::optional<at::Scalar>& min, const std::optional<at::Scalar>& max) {
  if (clamp_scalar_into(self, self, min, max)) return self;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::clamp_>::call(self, min, max);
}

at::Tensor& clamp_out(const at::Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max, at::Tensor& out) {
  if (clamp_scalar_into(out, self, min, max)) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::clamp_out>::call(self, min, max, out);
}

at::Tensor clamp_tensor(const at::Tensor& self, const std::optional<at::Tensor>& min,
                        const std::optional<at::Tensor>& max) {
  at::Tensor out;
  if (clamp_into(out, self, unwrap(min), unwrap(max))) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::clamp_Tensor>::call(self, min, max);
}

at::Tensor& clamp__tensor(at::Tensor& self, const std::optional<at::Tensor>& min, const std::optional<at::Tensor>& max) {
  if (clamp_into(self, self, unwrap(min), unwrap(max))) return self;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::clamp__Tensor>::call(self, min, max);
}

at::Tensor& clamp_tensor_out(const at::Tensor& self, const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max, at::Tensor& out) {
  if (clamp_into(out, self, unwrap(min), unwrap(max))) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::clamp_Tensor_out>::call(self, min, max, out);
}

// clamp_min / clamp_max: one bound, Scalar or Tensor, functional / in-place / out.
#define TORCH_DML_ONE_BOUND(NAME, MIN, MAX)                                                                    \
  at::Tensor NAME(const at::Tensor& self, const at::Scalar& bound) {                                          \
    const std::optional<at::Scalar> b = bound;                                                                \
    at::Tensor out;                                                                                           \
    if (clamp_scalar_into(out, self, MIN, MAX)) return out;                                                   \
    return at::native::call_fallback_fn<&cpu_fallback, at::_ops::NAME>::call(self, bound);                    \
  }                                                                                                           \
  at::Tensor& NAME##_(at::Tensor& self, const at::Scalar& bound) {                                            \
    const std::optional<at::Scalar> b = bound;                                                                \
    if (clamp_scalar_into(self, self, MIN, MAX)) return self;                                                 \
    return at::native::call_fallback_fn<&cpu_fallback, at::_ops::NAME##_>::call(self, bound);                 \
  }                                                                                                           \
  at::Tensor& NAME##_out(const at::Tensor& self, const at::Scalar& bound, at::Tensor& out) {                  \
    const std::optional<at::Scalar> b = bound;                                                                \
    if (clamp_scalar_into(out, self, MIN, MAX)) return out;                                                   \
    return at::native::call_fallback_fn<&cpu_fallback, at::_ops::NAME##_out>::call(self, bound, out);         \
  }                                                                                                           \
  at::Tensor NAME##_tensor(const at::Tensor& self, const at::Tensor& b) {                                     \
    at::Tensor out;                                                                                           \
    if (clamp_into(out, self, MIN, MAX)) return out;                                                          \
    return at::native::call_fallback_fn<&cpu_fallback, at::_ops::NAME##_Tensor>::call(self, b);               \
  }                                                                                                           \
  at::Tensor& NAME##__tensor(at::Tensor& self, const at::Tensor& b) {                                         \
    if (clamp_into(self, self, MIN, MAX)) return self;                                                        \
    return at::native::call_fallback_fn<&cpu_fallback, at::_ops::NAME##__Tensor>::call(self, b);              \
  }                                                                                                           \
  at::Tensor& NAME##_tensor_out(const at::Tensor& self, const at::Tensor& b, at::Tensor& out) {               \
    if (clamp_into(out, self, MIN, MAX)) return out;                                                          \
    return at::native::call_fallback_fn<&cpu_fallback, at::_ops::NAME##_Tensor_out>::call(self, b, out);      \
  }

// MIN / MAX name the bound `b` or leave the side out; `{}` is an absent bound of either kind.
TORCH_DML_ONE_BOUND(clamp_min, b, {})
TORCH_DML_ONE_BOUND(clamp_max, {}, b)
#undef TORCH_DML_ONE_BOUND

// ---- where / masked_fill_ ------------------------------------------------------------------------

bool where_into(const at::Tensor& out, const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
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
  return run(ops::where, iter, {}, result);
}

c10::Device dml_device_of(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors)
    if (t->device().type() == c10::DeviceType::PrivateUse1) return t->device();
  return tensors.begin()[0]->device();
}

at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor out = at::empty({0}, self.options()
                                            .dtype(at::result_type(self, other))
                                            .device(dml_device_of({&condition, &self, &other})));
  if (where_into(out, condition, self, other)) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::where_self>::call(condition, self, other);
}

at::Tensor& where_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (where_into(out, condition, self, other)) return out;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::where_self_out>::call(condition, self, other, out);
}

bool masked_fill_into(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
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
  return run(ops::where, iter, {}, self.scalar_type());
}

at::Tensor& masked_fill__scalar(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  if (masked_fill_into(self, mask, at::native::wrapped_scalar_tensor(value))) return self;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::masked_fill__Scalar>::call(self, mask, value);
}

at::Tensor& masked_fill__tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (masked_fill_into(self, mask, value)) return self;
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::masked_fill__Tensor>::call(self, mask, value);
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

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  const int64_t size = arange_size(start, end, step, out.scalar_type());
  if (out.numel() != size) out.resize_({size});
  if (size == 0) return out;
  // One dispatch (positions restart in each piece of a split launch): 64 MiB fits every adapter's binding.
  if (out.dim() == 1 && out.nbytes() <= (64ull << 20)) {
    at::TensorIterator iter =
        at::TensorIteratorConfig().add_output(out).resize_outputs(false).check_all_same_dtype(false).build();
    if (run(ops::arange, iter, {start, step}, out.scalar_type())) return out;
  }
  return at::native::call_fallback_fn<&cpu_fallback, at::_ops::arange_start_out>::call(start, end, step, out);
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/elementwise_special_ops.inc"

} // namespace
} // namespace torch_dml::aten
