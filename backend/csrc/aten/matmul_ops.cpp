// The matmul family on the GEMM kernel: mm, bmm, addmm, baddbmm, addmv, addbmm, dot, for every dtype
// but bool the adapter computes on (kernels::gemm_supports). matmul, linear, mv and einsum reach these
// through their composites. Inputs of other dtypes go to the CPU fallback
// (counted, refused in strict mode) rather than to a silent host computation.
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/addbmm_ops.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/addmv_ops.h>
#include <ATen/ops/baddbmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/dot_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/dtype_rule.h"
#include "aten/fallback.h"
#include "kernels/matmul_kernel.h"

namespace torch_dml::aten {
namespace {

kernels::MatrixOperand operand(const at::Tensor& t3) {
  // t3 is a (batch, rows, cols) view.
  kernels::MatrixOperand op;
  op.ref = device_ref(t3);
  op.batch_stride = static_cast<uint64_t>(t3.stride(0));
  op.row_stride = static_cast<uint64_t>(t3.stride(1));
  op.col_stride = static_cast<uint64_t>(t3.stride(2));
  return op;
}

// out3 = alpha * a3 @ b3 + beta * addend3, all (batch, rows, cols) views on one device.
void run_gemm(const at::Tensor& a3, const at::Tensor& b3, const std::optional<at::Tensor>& addend3,
              const c10::Scalar& alpha, const c10::Scalar& beta, const at::Tensor& out3) {
  if (out3.numel() == 0) return;
  runtime::DeviceContext& context = context_of(out3);
  const c10::ScalarType accumulator = kernels::gemm_accumulator(a3.scalar_type());
  const bool direct = out3.scalar_type() == accumulator;
  c10::DeviceGuard guard(out3.device());
  at::Tensor target = direct ? out3 : at::empty(out3.sizes(), out3.options().dtype(accumulator));
  kernels::GemmProblem problem;
  problem.batch = static_cast<uint64_t>(a3.size(0));
  problem.m = static_cast<uint64_t>(a3.size(1));
  problem.k = static_cast<uint64_t>(a3.size(2));
  problem.n = static_cast<uint64_t>(b3.size(2));
  problem.out = operand(target);
  if (problem.k == 0) {
    // Nothing to read from A or B (they may have no storage at all): bind the output in their place.
    problem.a = problem.b = kernels::MatrixOperand{problem.out.ref, 0, 0, 0};
    problem.a.ref.dtype = problem.b.ref.dtype = a3.scalar_type();
    problem.a.ref.element_offset = problem.b.ref.element_offset = 0;
  } else {
    problem.a = operand(a3);
    problem.b = operand(b3);
  }
  problem.alpha = alpha;
  problem.beta = beta;
  // beta == 0 ignores the addend entirely (NaN and inf included), as PyTorch specifies.
  if (addend3 && beta.toDouble() != 0.0) problem.addend = operand(*addend3);
  const std::string reason = kernels::gemm_unsupported_reason(context, problem);
  TORCH_CHECK(reason.empty(), "torch_dml: matmul of ", a3.scalar_type(), " on ", context.describe(), ": ", reason);
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    kernels::gemm(context, problem);
  }
  if (!direct) out3.copy_(target);
}

void check_same_dtype(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ",
              a.scalar_type(), " != ", b.scalar_type());
  TORCH_CHECK(out.scalar_type() == a.scalar_type(), "Expected out tensor to have dtype ", a.scalar_type(),
              ", but got ", out.scalar_type(), " instead");
}

// The GEMM computes on one dtype: the factors' and the addend's (the rest of the rule is native.yaml's).
bool same_dtype(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& addend = std::nullopt) {
  return a.scalar_type() == b.scalar_type() && (!addend || addend->scalar_type() == a.scalar_type());
}

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
              self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  check_same_dtype(self, mat2, out);
  at::native::resize_output(out, {self.size(0), mat2.size(1)});
  run_gemm(self.unsqueeze(0), mat2.unsqueeze(0), std::nullopt, 1, 0, out.unsqueeze(0));
  return out;
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "mat1 and mat2 must be matrices");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  check_same_dtype(mat1, mat2, out);
  const std::vector<int64_t> shape{mat1.size(0), mat2.size(1)};
  at::Tensor addend = self.expand(shape);
  // out may alias self (addmm_): read the addend before writing it.
  if (out.is_same(self) || (out.defined() && out.numel() && out.storage().is_alias_of(self.storage())))
    addend = addend.clone();
  at::native::resize_output(out, shape);
  run_gemm(mat1.unsqueeze(0), mat2.unsqueeze(0), addend.unsqueeze(0), alpha, beta, out.unsqueeze(0));
  return out;
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 3 && mat2.dim() == 3, "batch1 and batch2 must be 3D tensors");
  TORCH_CHECK(self.size(0) == mat2.size(0) && self.size(2) == mat2.size(1), "Expected size for first two dimensions "
              "of batch2 tensor to be: [", self.size(0), ", ", self.size(2), "] but got: [", mat2.size(0), ", ",
              mat2.size(1), "].");
  check_same_dtype(self, mat2, out);
  at::native::resize_output(out, {self.size(0), self.size(1), mat2.size(2)});
  run_gemm(self, mat2, std::nullopt, 1, 0, out);
  return out;
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                        const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(batch1.dim() == 3 && batch2.dim() == 3, "batch1 and batch2 must be 3D tensors");
  TORCH_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1),
              "Expected size for first two dimensions of batch2 tensor to be: [", batch1.size(0), ", ",
              batch1.size(2), "] but got: [", batch2.size(0), ", ", batch2.size(1), "].");
  check_same_dtype(batch1, batch2, out);
  const std::vector<int64_t> shape{batch1.size(0), batch1.size(1), batch2.size(2)};
  at::Tensor addend = self.expand(shape);
  if (out.defined() && out.numel() && out.storage().is_alias_of(self.storage())) addend = addend.clone();
  at::native::resize_output(out, shape);
  run_gemm(batch1, batch2, addend, alpha, beta, out);
  return out;
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const c10::Scalar& beta,
                      const c10::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ", self.dim(), ", ",
              mat.dim(), ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0), "size mismatch, got input (", self.size(0), "), mat (", mat.size(0), "x",
              mat.size(1), "), vec (", vec.size(0), ")");
  check_same_dtype(mat, vec, out);
  at::Tensor addend = self.expand({mat.size(0)});
  if (out.defined() && out.numel() && out.storage().is_alias_of(self.storage())) addend = addend.clone();
  at::native::resize_output(out, {mat.size(0)});
  run_gemm(mat.unsqueeze(0), vec.unsqueeze(0).unsqueeze(2), addend.unsqueeze(0).unsqueeze(2), alpha, beta,
           out.unsqueeze(0).unsqueeze(2));
  return out;
}

// The batches' products summed: one GEMM over the batches laid side by side along K ((m, B*k) by
// (B*k, n); the first is a copy unless B or m is 1). float16 and bfloat16 instead add one batch at a
// time, rounding to the dtype after each as the CPU and CUDA kernels do (a single float32 sum is more
// accurate, but differs from both by an ulp of the running total).
at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                       const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0), "batch1 and batch2 must have same number of batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (", batch1.size(1), "x",
              batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2), ")");
  const int64_t batches = batch1.size(0), m = batch1.size(1), k = batch1.size(2), n = batch2.size(2);
  const c10::ScalarType type = batch1.scalar_type();
  if ((type != c10::kHalf && type != c10::kBFloat16) || batches < 2)
    return addmm_out(self, batch1.permute({1, 0, 2}).reshape({m, batches * k}), batch2.reshape({batches * k, n}),
                     beta, alpha, out);
  check_same_dtype(batch1, batch2, out);
  at::Tensor addend = self.expand({m, n});
  if (out.defined() && out.numel() && out.storage().is_alias_of(self.storage())) addend = addend.clone();
  at::native::resize_output(out, {m, n});
  for (int64_t b = 0; b < batches; ++b)
    run_gemm(batch1.select(0, b).unsqueeze(0), batch2.select(0, b).unsqueeze(0),
             (b == 0 ? addend : out).unsqueeze(0), alpha, b == 0 ? beta : c10::Scalar(1), out.unsqueeze(0));
  return out;
}

at::Tensor addbmm_new(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2, const c10::Scalar& beta,
                  const c10::Scalar& alpha) {
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({0}, self.options());
  return addbmm_out(self, batch1, batch2, beta, alpha, out);
}

at::Tensor& addbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2, const c10::Scalar& beta,
                    const c10::Scalar& alpha) {
  // A broadcastable self is resized to the product's shape, as on the CPU.
  return addbmm_out(self, batch1, batch2, beta, alpha, self);
}

at::Tensor dot_product(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
  c10::DeviceGuard guard(self.device());
  at::Tensor out = at::empty({}, self.options());
  run_gemm(self.view({1, 1, -1}), other.view({1, -1, 1}), std::nullopt, 1, 0, out.view({1, 1, 1}));
  return out;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/matmul_ops.inc"

} // namespace
} // namespace torch_dml::aten
