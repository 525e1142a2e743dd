// tril / triu (functional, in-place and out=) on the word kernel, for every dtype the adapter holds:
// the kernel moves bits, so float64 or complex tensors need no shader feature. Inputs of any strides
// go through a contiguous copy; an out= tensor that is not contiguous receives the result by copy_.
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/tril_ops.h>
#include <ATen/ops/triu_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/native_run.h"
#include "aten/word_view.h"
#include "kernels/triangle_kernel.h"

namespace torch_dml::aten {
namespace {

// out <- the lower (tril) or upper (triu) triangle of self; false, with nothing written, where the word
// kernel does not take it (native.yaml: `tries`). out may be self (the in-place overloads).
bool triangle_out(const at::Tensor& self, int64_t diagonal, const at::Tensor& out, bool lower) {
  const char* op = lower ? "tril" : "triu";
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
  // The structured out= contract of the CPU kernel.
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "Expected out tensor to have dtype ", self.dtype(),
              ", but got ", out.dtype(), " instead");
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to have device ", self.device(), ", but got ",
              out.device(), " instead");
  c10::DeviceGuard guard(self.device());
  at::native::resize_output(out, self.sizes());
  if (out.numel() == 0) return true;
  const at::Tensor source = word_addressable(self) ? self : self.clone(at::MemoryFormat::Contiguous);
  const bool direct = word_addressable(out);
  at::Tensor target = direct ? out : at::empty(self.sizes(), self.options());
  kernels::TriangleProblem problem;
  problem.elements = static_cast<uint64_t>(self.numel());
  problem.rows = static_cast<uint64_t>(self.size(-2));
  problem.cols = static_cast<uint64_t>(self.size(-1));
  problem.diagonal = diagonal;
  problem.lower = lower;
  problem.itemsize = self.element_size();
  problem.src = device_words(source);
  problem.dst = device_words(target);
  if (!run_native(context_of(self), problem, &kernels::triangle_unsupported_reason, &kernels::triangle)) return false;
  if (!direct) out.copy_(target);
  return true;
}

std::optional<at::Tensor> triangle(const at::Tensor& self, int64_t diagonal, bool lower) {
  c10::DeviceGuard guard(self.device());
  const at::Tensor out = at::empty({0}, self.options());
  return triangle_out(self, diagonal, out, lower) ? std::optional<at::Tensor>(out) : std::nullopt;
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/triangle_ops.inc"

} // namespace
} // namespace torch_dml::aten
