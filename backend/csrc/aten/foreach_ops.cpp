// The _foreach_* ops torch.optim's foreach steps call (Adam, AdamW, SGD, RMSprop, Adagrad), in their
// Scalar, List and ScalarList overloads, in place and not: a list of float32, float16 or bfloat16
// tensors goes through the multi-tensor launch (kernels/foreach_kernel.h, as many tensors per dispatch
// as the adapter's bindings allow), computing each element with the expression of the per-tensor op's
// row of backend/ops.yaml, so results are the per-tensor op's bit for bit. A list the kernel does not
// take (another dtype, tensors on several devices or of several dtypes, a non-contiguous tensor, an
// input partly overlapping its output, a complex scalar), and every list on a software adapter, where
// the per-tensor kernels are faster (kernels/tensor_slots.cpp), runs through torch's own per-tensor loop,
// whose per-tensor ops stay on the device (or fall back one by one, counted, where they must), and
// which raises PyTorch's errors for malformed lists.
#include <ATen/ATen.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "aten/common.h"
#include "kernels/dtypes.h"
#include "kernels/foreach_kernel.h"
#include "kernels/generated/elementwise_ops.h"
#include "kernels/tensor_slots.h"

namespace torch_dml::aten {
namespace {

// Where an input of a row's expression (a, b, c, s0) comes from among the call's arguments: `self`,
// the tensor lists after it, its scalars, the ScalarList's entry for the tensor, or a constant.
enum class Arg : uint8_t { Zero, One, Self, List0, List1, Scalar0, Scalar1, Listed };

struct Spec {
  const char* op;
  const char* kernel;
  const char* expression; // the per-tensor op's float expression
  Arg inputs[4];          // a, b, c, s0
};

constexpr Spec row_spec(const char* op, const kernels::ElementwiseOp& row, Arg a, Arg b, Arg c, Arg s0) {
  return Spec{op, row.name, row.float_expr, {a, b, c, s0}};
}

using enum Arg;
namespace ops = kernels::ops;

// torch's per-tensor loops call add(t, scalar) (alpha 1), add(t, other, alpha), lerp(t, end, weight)...
constexpr Spec kAddScalar = row_spec("_foreach_add", ops::add, Self, Scalar0, Zero, One);
constexpr Spec kAddList = row_spec("_foreach_add", ops::add, Self, List0, Zero, Scalar0);
constexpr Spec kAddScalarList = row_spec("_foreach_add", ops::add, Self, Listed, Zero, One);
constexpr Spec kSubScalar = row_spec("_foreach_sub", ops::sub, Self, Scalar0, Zero, One);
constexpr Spec kSubList = row_spec("_foreach_sub", ops::sub, Self, List0, Zero, Scalar0);
constexpr Spec kSubScalarList = row_spec("_foreach_sub", ops::sub, Self, Listed, Zero, One);
constexpr Spec kMulScalar = row_spec("_foreach_mul", ops::mul, Self, Scalar0, Zero, Zero);
constexpr Spec kMulList = row_spec("_foreach_mul", ops::mul, Self, List0, Zero, Zero);
constexpr Spec kMulScalarList = row_spec("_foreach_mul", ops::mul, Self, Listed, Zero, Zero);
constexpr Spec kDivScalar = row_spec("_foreach_div", ops::div, Self, Scalar0, Zero, Zero);
constexpr Spec kDivList = row_spec("_foreach_div", ops::div, Self, List0, Zero, Zero);
constexpr Spec kDivScalarList = row_spec("_foreach_div", ops::div, Self, Listed, Zero, Zero);
// torch's loop for _foreach_maximum.List is clamp_min(t, other).
constexpr Spec kMaximumList = row_spec("_foreach_maximum", ops::clamp_min, Self, List0, Zero, Zero);
constexpr Spec kAddcmulScalar = row_spec("_foreach_addcmul", ops::addcmul, Self, List0, List1, Scalar0);
constexpr Spec kAddcmulScalarList = row_spec("_foreach_addcmul", ops::addcmul, Self, List0, List1, Listed);
constexpr Spec kAddcdivScalar = row_spec("_foreach_addcdiv", ops::addcdiv, Self, List0, List1, Scalar0);
constexpr Spec kAddcdivScalarList = row_spec("_foreach_addcdiv", ops::addcdiv, Self, List0, List1, Listed);
constexpr Spec kLerpScalar = row_spec("_foreach_lerp", ops::lerp_scalar, Self, List0, Zero, Scalar0);
constexpr Spec kLerpList = row_spec("_foreach_lerp", ops::lerp, Self, List0, List1, Zero);
constexpr Spec kLerpScalarList = row_spec("_foreach_lerp", ops::lerp_scalar, Self, List0, Zero, Listed);
constexpr Spec kSqrt = row_spec("_foreach_sqrt", ops::sqrt, Self, Zero, Zero, Zero);
constexpr Spec kNeg = row_spec("_foreach_neg", ops::neg, Self, Zero, Zero, Zero);
constexpr Spec kZero{"_foreach_zero_", "zero", "0.0f", {Zero, Zero, Zero, Zero}};

// One call's arguments, gathered in order from the overload's parameters.
struct Call {
  const Spec& spec;
  at::TensorList self;
  std::vector<at::TensorList> lists;
  std::vector<at::Scalar> scalars;
  at::ArrayRef<at::Scalar> listed;

  void take(at::TensorList list) { lists.push_back(list); }
  void take(const at::Scalar& scalar) { scalars.push_back(scalar); }
  void take(at::ArrayRef<at::Scalar> values) { listed = values; }

  bool uses(Arg arg) const {
    for (Arg in : spec.inputs)
      if (in == arg) return true;
    return false;
  }
};

bool kernel_dtype(c10::ScalarType type) {
  return kernels::is_float_family(type);
}

// Whether the multi-tensor kernel takes the call's tensors (see the top of the file).
bool kernel_takes(const Call& call, bool in_place) {
  const at::TensorList self = call.self;
  if (self.empty() || !self[0].defined() || !self[0].device().is_privateuseone()) return false;
  const at::Tensor& first = self[0];
  if (!kernel_dtype(first.scalar_type()) || !kernels::many_slots_pay(context_of(first))) return false;
  for (const at::TensorList& list : call.lists)
    if (list.size() != self.size()) return false;
  if (call.uses(Listed) && call.listed.size() != self.size()) return false;
  for (const at::Scalar& s : call.scalars)
    if (s.isComplex()) return false;
  for (const at::Scalar& s : call.listed)
    if (s.isComplex()) return false;
  auto usable = [&](const at::Tensor& t, const at::Tensor& like) {
    return t.defined() && t.device() == first.device() && t.scalar_type() == first.scalar_type() &&
        t.sizes() == like.sizes() && t.is_contiguous();
  };
  for (size_t i = 0; i < self.size(); ++i) {
    if (!usable(self[i], self[i])) return false;
    for (const at::TensorList& list : call.lists) {
      const at::Tensor& t = list[i];
      if (!usable(t, self[i])) return false;
      // Written in place while read: the same elements or none of them.
      if (in_place && t.numel() && t.storage().is_alias_of(self[i].storage()) && t.data_ptr() != self[i].data_ptr())
        return false;
    }
  }
  return true;
}

float scalar_value(const at::Scalar& s) {
  return s.to<float>();
}

// Runs the call on the multi-tensor kernel; false (nothing changed) when it does not take it. `out`
// receives the results of the functional overloads; null for in-place ones.
bool run(const Call& call, std::vector<at::Tensor>* out) {
  const bool in_place = out == nullptr;
  if (!kernel_takes(call, in_place)) return false;
  const at::TensorList self = call.self;
  const at::Tensor& first = self[0];
  c10::DeviceGuard guard(first.device());
  std::vector<at::Tensor> results;
  if (!in_place) {
    results.reserve(self.size());
    for (const at::Tensor& t : self) results.push_back(at::empty_like(t, at::MemoryFormat::Contiguous));
  }

  kernels::ForeachProblem problem;
  problem.op = call.spec.op;
  problem.kernel = call.spec.kernel;
  problem.expression = call.spec.expression;
  problem.dtype = first.scalar_type();
  // Operand 0 is the output; self is also operand 0 in place, then the inputs in order.
  uint32_t next = 1;
  const uint32_t self_operand = in_place ? 0 : next++;
  uint32_t list_operand[2] = {0, 0};
  for (size_t l = 0; l < call.lists.size() && l < 2; ++l)
    if (call.uses(l == 0 ? List0 : List1)) list_operand[l] = next++;
  problem.operands = next;
  for (int k = 0; k < 4; ++k) {
    kernels::ForeachInput& in = problem.inputs[k];
    switch (call.spec.inputs[k]) {
      case Zero: in = {kernels::ForeachSource::Zero, 0}; break;
      case One: in = {kernels::ForeachSource::One, 0}; break;
      case Self: in = {kernels::ForeachSource::Operand, self_operand}; break;
      case List0: in = {kernels::ForeachSource::Operand, list_operand[0]}; break;
      case List1: in = {kernels::ForeachSource::Operand, list_operand[1]}; break;
      case Scalar0: in = {kernels::ForeachSource::Scalar, 0}; break;
      case Scalar1: in = {kernels::ForeachSource::Scalar, 1}; break;
      case Listed: in = {kernels::ForeachSource::Listed, 0}; break;
    }
  }
  for (size_t s = 0; s < call.scalars.size() && s < 2; ++s) problem.scalars[s] = scalar_value(call.scalars[s]);
  problem.tensors.resize(self.size());
  for (size_t i = 0; i < self.size(); ++i) {
    kernels::ForeachTensor& t = problem.tensors[i];
    t.count = static_cast<uint64_t>(self[i].numel());
    if (t.count == 0) continue;
    t.operands[0] = device_ref(in_place ? self[i] : results[i]);
    if (!in_place) t.operands[self_operand] = device_ref(self[i]);
    for (size_t l = 0; l < 2; ++l)
      if (list_operand[l]) t.operands[list_operand[l]] = device_ref(call.lists[l][i]);
    if (call.uses(Listed)) t.listed = scalar_value(call.listed[i]);
  }
  if (!kernels::foreach_run(context_of(first), problem).empty()) return false;
  if (out) *out = std::move(results);
  return true;
}

template <typename Slow, typename... Args>
std::vector<at::Tensor> functional(const Spec& spec, Slow slow, at::TensorList self, const Args&... args) {
  Call call{spec, self, {}, {}, {}};
  (call.take(args), ...);
  std::vector<at::Tensor> out;
  if (run(call, &out)) return out;
  return slow(self, args...);
}

template <typename Slow, typename... Args>
void in_place(const Spec& spec, Slow slow, at::TensorList self, const Args&... args) {
  Call call{spec, self, {}, {}, {}};
  (call.take(args), ...);
  if (!run(call, nullptr)) slow(self, args...);
}

// The rows of native.yaml call functional / in_place with their op and torch's per-tensor loop.
namespace slow = at::native;

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/foreach_ops.inc"

} // namespace
} // namespace torch_dml::aten
