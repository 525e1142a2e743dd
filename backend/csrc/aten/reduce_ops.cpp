// The kernel entries of the reductions declared in backend/ops/reductions.yaml: sum, nansum, mean, prod,
// amax, amin, aminmax, max/min (all, and values + indices over a dim), argmax, argmin, any, all, var,
// std, var_mean, std_mean, count_nonzero, linalg_vector_norm. The generated registrations
// (aten/generated/reduce_registrations.cpp) send what the kernel cannot take to the counted fallback
// before calling an entry, so an entry only computes. at::native::make_reduction gives the output shape
// and the iterator (reduced dims have output stride 0).
#include <ATen/native/ReduceOpsUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/strides.h>

#include <cmath>
#include <limits>
#include <vector>

#include "aten/common.h"
#include "aten/generated/reduce_entries.h"
#include "aten/reductions.h"
#include "kernels/dtypes.h"
#include "kernels/reduce_kernel.h"

namespace torch_dml::aten::reductions {
namespace {

using kernels::ReduceOp;

// Whether the input, reduced over `dims`, may exceed one binding: contiguous and reduced over trailing
// dims (or all of them), each dispatch binds only the rows or row slices it reads.
bool windows_by_rows(const at::Tensor& self, at::OptionalIntArrayRef dims) {
  if (!self.is_contiguous()) return false;
  if (!dims || dims->empty()) return true;
  std::vector<bool> reduced(self.dim(), false);
  for (int64_t d : *dims) reduced[at::maybe_wrap_dim(d, self.dim())] = true;
  bool trailing = true;
  for (int64_t d = self.dim() - 1; d >= 0; --d) {
    if (!reduced[d]) trailing = false;
    else if (!trailing && self.size(d) != 1) return false;
  }
  return true;
}

bool reduce_geometry(const at::TensorIteratorBase& iter, int outputs, kernels::ReduceGeometry& g) {
  g = {};
  const int input = outputs;
  const auto shape = iter.shape();
  for (int d = 0; d < iter.ndim(); ++d) {
    if (shape[d] == 1) continue;
    const int64_t out_stride = iter.strides(0)[d] / iter.element_size(0);
    const int64_t in_stride = iter.strides(input)[d] / iter.element_size(input);
    if (in_stride < 0 || in_stride > std::numeric_limits<uint32_t>::max() || shape[d] > std::numeric_limits<uint32_t>::max())
      return false;
    if (out_stride == 0) {
      if (g.red_rank == kernels::kMaxCopyRank) return false;
      g.red_shape[g.red_rank] = static_cast<uint32_t>(shape[d]);
      g.red_in_stride[g.red_rank++] = static_cast<uint32_t>(in_stride);
      g.red_numel *= shape[d];
    } else {
      if (g.out_rank == kernels::kMaxCopyRank) return false;
      g.out_shape[g.out_rank] = static_cast<uint32_t>(shape[d]);
      g.out_in_stride[g.out_rank] = static_cast<uint32_t>(in_stride);
      g.out_stride[g.out_rank] = static_cast<uint32_t>(out_stride);
      if (outputs == 2) g.index_stride[g.out_rank] = static_cast<uint32_t>(iter.strides(1)[d] / iter.element_size(1));
      ++g.out_rank;
      g.out_numel *= shape[d];
    }
  }
  return true;
}

struct Extras {
  double correction = 0; // Var
  double p = 2;          // NormP
  bool sqrt_result = false;
};

// Runs the kernel over a built iterator whose outputs are acc-typed (operand 0, and indices 1).
void launch(ReduceOp op, const char* name, const at::TensorIteratorBase& iter, int outputs, const at::Tensor& self,
            const Extras& extras) {
  kernels::ReduceGeometry g;
  TORCH_CHECK(reduce_geometry(iter, outputs, g), "torch_dml: ", name, ": shape beyond the kernel's limits");
  if (g.out_numel == 0) return;
  const bool picks = op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  TORCH_CHECK_INDEX(!picks || g.red_numel > 0, name, "(): Expected reduction dim to have non-zero size.");
  runtime::DeviceContext& context = context_of(self);
  kernels::ReduceProblem problem;
  problem.op = op;
  problem.out = device_ref(iter.data_ptr(0), iter.dtype(0));
  if (outputs == 2) problem.indices = device_ref(iter.data_ptr(1), iter.dtype(1));
  if (g.red_numel == 0 || iter.data_ptr(outputs) == nullptr) {
    // Nothing to read: any valid buffer will do as the (unread) input.
    problem.input = problem.out;
    problem.input.dtype = iter.dtype(outputs);
    problem.input.element_offset = 0;
  } else {
    problem.input = device_ref(iter.data_ptr(outputs), iter.dtype(outputs));
  }
  problem.geometry = g;
  const double n = static_cast<double>(g.red_numel);
  if (op == ReduceOp::Mean) problem.scale = 1.0 / n;
  if (op == ReduceOp::Var) problem.scale = 1.0 / std::max(n - extras.correction, 0.0);
  problem.p = extras.p;
  problem.sqrt_result = extras.sqrt_result;
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernels::reduce(context, problem);
}

// result <- op(self) over dims, accumulating in the op's type; result is resized as PyTorch would.
void reduce_into(ReduceOp op, const char* name, const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim,
                 const at::Tensor& result, const Extras& extras = {}) {
  const c10::ScalarType acc = kernels::reduce_accumulator(op, self.scalar_type(), result.scalar_type());
  c10::DeviceGuard guard(self.device());
  at::Tensor acc_out = result.scalar_type() == acc ? result : at::empty({0}, result.options().dtype(acc));
  auto iter = at::native::make_reduction(name, acc_out, self, dims, keepdim, self.scalar_type(), acc);
  launch(op, name, iter, 1, self, extras);
  if (!acc_out.is_same(result)) assign_out(result, acc_out);
}

// values, indices <- max/min/argmax/argmin of self over one dim.
void reduce_with_indices(ReduceOp op, const char* name, const at::Tensor& self, int64_t dim, bool keepdim,
                         const at::Tensor& values, const at::Tensor& indices) {
  const c10::ScalarType acc = kernels::reduce_accumulator(op, self.scalar_type(), self.scalar_type());
  c10::DeviceGuard guard(self.device());
  // make_reduction wants both outputs with the same strides: an out= that is not row-major (argmax into
  // a column, say) gets a fresh output, copied into it afterwards.
  const auto row_major = [](const at::Tensor& t) {
    return t.strides() == c10::IntArrayRef(c10::contiguous_strides(t.sizes()));
  };
  const bool values_direct = values.defined() && values.scalar_type() == acc && row_major(values);
  at::Tensor acc_values = values_direct ? values : at::empty({0}, self.options().dtype(acc));
  at::Tensor index_out = row_major(indices) ? indices : at::empty({0}, indices.options());
  const at::Tensor input = self.scalar_type() == acc ? self : self.to(acc);
  auto iter = at::native::make_reduction(name, acc_values, index_out, input, dim, keepdim, acc, c10::kLong);
  launch(op, name, iter, 2, input, {});
  if (values.defined() && !acc_values.is_same(values)) assign_out(values, acc_values);
  if (!index_out.is_same(indices)) assign_out(indices, index_out);
}


c10::ScalarType result_type(const at::Tensor& out, std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(!dtype || *dtype == out.scalar_type(), "Expected out tensor to have dtype ", *dtype, ", but got ",
              out.scalar_type(), " instead");
  return out.scalar_type();
}

at::Tensor full_extreme(ReduceOp op, const char* name, const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0. "
              "Specify the reduction dim with the 'dim' argument.");
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({}, self.options());
  reduce_into(op, name, self, at::IntArrayRef{}, false, out);
  return out;
}

at::Tensor& full_extreme_out(ReduceOp op, const char* name, const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(c10::canCast(self.scalar_type(), out.scalar_type()), "Expected canCast(", self.scalar_type(), ", ",
              out.scalar_type(), ") to be true, but got false.");
  assign_out(out, full_extreme(op, name, self));
  return out;
}

// The dims an argmax/argmin/aminmax reduces: the one given, or all of them.
at::OptionalIntArrayRef arg_dims(const std::optional<int64_t>& dim) {
  return dim ? at::OptionalIntArrayRef(at::IntArrayRef(*dim)) : at::OptionalIntArrayRef();
}

void arg_reduce(ReduceOp op, const char* name, const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                at::Tensor& out) {
  if (dim) {
    reduce_with_indices(op, name, self, *dim, keepdim, at::Tensor(), out);
    return;
  }
  // Over all elements the index is into the flattened (row-major) tensor: reduce a contiguous copy.
  TORCH_CHECK_INDEX(self.numel() > 0, name, "(): Expected reduction dim to be specified for input.numel() == 0.");
  at::Tensor flat_index = at::empty({0}, out.options());
  reduce_with_indices(op, name, self.reshape({-1}), 0, false, at::Tensor(), flat_index);
  const std::vector<int64_t> shape = keepdim ? std::vector<int64_t>(self.dim(), 1) : std::vector<int64_t>{};
  at::native::resize_output(out, shape);
  out.copy_(flat_index.reshape(shape));
}

double correction_of(const std::optional<c10::Scalar>& correction) {
  return correction ? correction->toDouble() : 1.0;
}

std::tuple<at::Tensor, at::Tensor> moments(bool take_sqrt, const at::Tensor& self, at::OptionalIntArrayRef dim,
                                           const std::optional<c10::Scalar>& correction, bool keepdim) {
  c10::DeviceGuard guard(self.device());
  at::Tensor spread = at::empty({0}, self.options());
  at::Tensor mean = at::empty({0}, self.options());
  reduce_into(ReduceOp::Var, take_sqrt ? "std_mean" : "var_mean", self, dim, keepdim, spread,
              Extras{correction_of(correction), 2, take_sqrt});
  reduce_into(ReduceOp::Mean, "mean", self, dim, keepdim, mean);
  return {spread, mean};
}

} // namespace

bool takes(const at::Tensor& self, at::OptionalIntArrayRef dims, uint32_t classes,
           std::initializer_list<runtime::Feature> needs) {
  if (!computes_on(self, classes, needs)) return false;
  runtime::DeviceContext& context = context_of(self);
  if (self.numel() >= std::numeric_limits<uint32_t>::max()) return false;
  return self.storage().nbytes() <= context.limits().maxStorageBufferBindingSize || windows_by_rows(self, dims);
}

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  result_type(out, dtype);
  reduce_into(ReduceOp::Sum, "sum", self, dim, keepdim, out);
  return out;
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  result_type(out, dtype);
  reduce_into(c10::isFloatingType(self.scalar_type()) ? ReduceOp::NanSum : ReduceOp::Sum, "nansum", self, dim, keepdim, out);
  return out;
}

// nansum, prod, var and std are not structured: no default PrivateUse1 wrapper reaches their .out kernels.
at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<c10::ScalarType> dtype) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({0}, self.options().dtype(at::native::get_dtype_from_self(self, dtype, true)));
  return nansum_out(self, dim, keepdim, dtype, out);
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  const c10::ScalarType type = dtype.value_or(self.scalar_type());
  TORCH_CHECK(c10::isFloatingType(type), "mean(): could not infer output dtype. Input dtype must be either a floating "
              "point or complex dtype. Got: ", type);
  reduce_into(ReduceOp::Mean, "mean", self, dim, keepdim, out);
  return out;
}

at::Tensor prod_all(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({}, self.options().dtype(at::native::get_dtype_from_self(self, dtype, true)));
  reduce_into(ReduceOp::Prod, "prod", self, std::nullopt, false, out);
  return out;
}

at::Tensor& prod_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype,
                         at::Tensor& out) {
  result_type(out, dtype);
  reduce_into(ReduceOp::Prod, "prod", self, dim, keepdim, out);
  return out;
}

at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  reduce_into(ReduceOp::Max, "amax", self, dim, keepdim, out);
  return out;
}

at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  reduce_into(ReduceOp::Min, "amin", self, dim, keepdim, out);
  return out;
}

// Two passes over the input (amin, then amax): one dispatch chain each, no fused kernel.
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                at::Tensor& min, at::Tensor& max) {
  // PyTorch's own checks (aminmax's meta function), since this out= kernel is registered directly.
  if (dim) at::native::zero_numel_check_dims(self, *dim, "aminmax");
  else TORCH_CHECK(self.numel() > 0, "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                   "has no identity.");
  for (const at::Tensor* out : {&min, &max})
    TORCH_CHECK(out->scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.dtype(),
                ", but got ", out->dtype(), " instead");
  reduce_into(ReduceOp::Min, "aminmax", self, arg_dims(dim), keepdim, min);
  reduce_into(ReduceOp::Max, "aminmax", self, arg_dims(dim), keepdim, max);
  return {min, max};
}

at::Tensor max_all(const at::Tensor& self) {
  return full_extreme(ReduceOp::Max, "max", self);
}

at::Tensor min_all(const at::Tensor& self) {
  return full_extreme(ReduceOp::Min, "min", self);
}

at::Tensor& max_all_out(const at::Tensor& self, at::Tensor& out) {
  return full_extreme_out(ReduceOp::Max, "max", self, out);
}

at::Tensor& min_all_out(const at::Tensor& self, at::Tensor& out) {
  return full_extreme_out(ReduceOp::Min, "min", self, out);
}

std::tuple<at::Tensor&, at::Tensor&> max_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  reduce_with_indices(ReduceOp::ArgMax, "max", self, dim, keepdim, values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> min_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  reduce_with_indices(ReduceOp::ArgMin, "min", self, dim, keepdim, values, indices);
  return {values, indices};
}

at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  arg_reduce(ReduceOp::ArgMax, "argmax", self, dim, keepdim, out);
  return out;
}

at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  arg_reduce(ReduceOp::ArgMin, "argmin", self, dim, keepdim, out);
  return out;
}

at::Tensor& any_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  reduce_into(ReduceOp::Any, "any", self, dim, keepdim, out);
  return out;
}

at::Tensor& all_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  reduce_into(ReduceOp::All, "all", self, dim, keepdim, out);
  return out;
}

at::Tensor count_nonzero(const at::Tensor& self, at::IntArrayRef dim) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({0}, self.options().dtype(c10::kLong));
  reduce_into(ReduceOp::CountNonzero, "count_nonzero", self, dim, false, out);
  return out;
}

at::Tensor& var_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                    bool keepdim, at::Tensor& out) {
  reduce_into(ReduceOp::Var, "var", self, dim, keepdim, out, Extras{correction_of(correction), 2, false});
  return out;
}

at::Tensor var(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
               bool keepdim) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return var_out(self, dim, correction, keepdim, out);
}

at::Tensor& std_out(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                    bool keepdim, at::Tensor& out) {
  reduce_into(ReduceOp::Var, "std", self, dim, keepdim, out, Extras{correction_of(correction), 2, true});
  return out;
}

at::Tensor std_dev(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<c10::Scalar>& correction,
                   bool keepdim) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({0}, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  return std_out(self, dim, correction, keepdim, out);
}

std::tuple<at::Tensor, at::Tensor> var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction, bool keepdim) {
  return moments(false, self, dim, correction, keepdim);
}

std::tuple<at::Tensor, at::Tensor> std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction, bool keepdim) {
  return moments(true, self, dim, correction, keepdim);
}

at::Tensor& vector_norm_out(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  const double p = ord.toDouble();
  ReduceOp op = ReduceOp::NormP;
  if (p == 0) op = ReduceOp::Norm0;
  else if (p == 1) op = ReduceOp::Norm1;
  else if (p == 2) op = ReduceOp::Norm2;
  else if (std::isinf(p)) op = p > 0 ? ReduceOp::NormInf : ReduceOp::NormNegInf;
  if (std::isinf(p) && self.numel() == 0)
    TORCH_CHECK(false, "linalg.vector_norm cannot compute the ", ord, " norm on an empty tensor because the "
                "operation does not have an identity");
  reduce_into(op, "linalg_vector_norm", self, dim, keepdim, out, Extras{0, p, false});
  return out;
}

} // namespace torch_dml::aten::reductions
