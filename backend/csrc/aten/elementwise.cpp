#include "aten/elementwise.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <limits>

#include "aten/common.h"
#include "kernels/dtypes.h"

namespace torch_dml::aten::elementwise {

bool run(const kernels::ElementwiseOp& op, const at::TensorIteratorBase& iter,
         std::initializer_list<c10::Scalar> params, std::optional<c10::ScalarType> compute) {
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  if (iter.noutputs() != 1 || iter.ninputs() > kernels::kMaxElementwiseInputs ||
      params.size() > static_cast<size_t>(kernels::kMaxElementwiseParams) || iter.ndim() > kernels::kMaxRank)
    return false;
  const at::Tensor& out = iter.tensor(0);
  if (out.device().type() != c10::DeviceType::PrivateUse1) return false;
  if (iter.numel() == 0) return true;

  kernels::ElementwiseProblem problem;
  problem.op = &op;
  problem.compute = compute ? *compute : iter.common_dtype(); // not value_or: it would query an unset common dtype
  problem.rank = iter.ndim();
  problem.numel = static_cast<uint64_t>(iter.numel());
  const auto shape = iter.shape();
  for (int d = 0; d < problem.rank; ++d) {
    if (static_cast<uint64_t>(shape[d]) > kMax) return false;
    problem.shape[d] = static_cast<uint32_t>(shape[d]);
  }
  for (int k = 0; k < iter.ntensors(); ++k) {
    const bool scalar = k > 0 && iter.is_cpu_scalar(k);
    if (!scalar) {
      if (iter.device(k).type() != c10::DeviceType::PrivateUse1) return false;
      for (int d = 0; d < problem.rank; ++d) {
        const int64_t stride = iter.strides(k)[d] / iter.element_size(k);
        if (stride < 0 || static_cast<uint64_t>(stride) > kMax) return false; // flipped views: fallback
        problem.strides[k][d] = static_cast<uint32_t>(stride);
      }
    }
    if (k == 0) {
      problem.out = device_ref(iter.data_ptr(0), iter.dtype(0));
      continue;
    }
    kernels::ElementwiseInput& input = problem.inputs[k - 1];
    input.is_scalar = scalar;
    if (scalar) input.value = iter.tensor(k).item();
    else input.tensor = device_ref(iter.data_ptr(k), iter.dtype(k));
  }
  problem.input_count = iter.ninputs();
  for (const c10::Scalar& p : params) problem.params[problem.param_count++] = p;

  runtime::DeviceContext& context = context_of(out);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  return kernels::try_elementwise(context, problem);
}

bool kernel_dtype(const at::Tensor& t) {
  return !t.defined() || kernels::dtype_info(t.scalar_type()).has_value();
}

bool kernel_dtype(const c10::Scalar& s) {
  return !s.isComplex();
}

double finite_max(c10::ScalarType type) {
  switch (type) {
    case c10::kHalf: return static_cast<double>(std::numeric_limits<c10::Half>::max());
    case c10::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    case c10::kDouble: return std::numeric_limits<double>::max();
    case c10::kFloat: return std::numeric_limits<float>::max();
    default: return 0; // integers and bool hold no infinities to replace
  }
}

} // namespace torch_dml::aten::elementwise
