// Ops whose ATen kernels are registered per device (CPU, CUDA), composed here from dml ops as those
// kernels compute them: each ran on the CPU fallback before. norm.out is linalg_vector_norm (as ATen's
// own norm.out calls it; pairwise_distance, triplet losses and dist reach it), trace the diagonal's sum,
// vdot of real vectors their dot product, channel_shuffle the view and permute of ShuffleNet's shuffle,
// linalg_cross the three products of its components, masked_scatter_ (vision-language models merge image
// features into token embeddings with it) a running count of the mask, a gather and a select. What the
// composed ops do not take falls back through them, one by one.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/linalg_cross_ops.h>
#include <ATen/ops/masked_scatter_ops.h>
#include <ATen/ops/vdot_ops.h>
#include <c10/core/WrapDimMinimal.h>
#include <torch/library.h>

#include <optional>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/index_range.h"

namespace torch_dml::aten {
namespace {

at::Tensor& norm_into(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                      at::Tensor& out) {
  return at::linalg_vector_norm_out(out, self, p.value_or(2.0), dim, keepdim, std::nullopt);
}

at::Tensor norm_dim(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef dim, bool keepdim) {
  return at::linalg_vector_norm(self, p.value_or(2.0), dim, keepdim, std::nullopt);
}

at::Tensor diagonal_sum(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return self.diagonal().sum();
}

at::Tensor real_vdot(const at::Tensor& self, const at::Tensor& other) {
  return at::dot(self, other); // complex vectors (conjugated) go to the CPU: native.yaml's `takes`
}

at::Tensor shuffled(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input to have at least 3 dimensions, but got input with sizes ",
              self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.", " Value of groups:", groups);
  const int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  std::vector<int64_t> grouped = {self.size(0), groups, c / groups};
  grouped.insert(grouped.end(), self.sizes().begin() + 2, self.sizes().end());
  // The CPU's result keeps the input's layout.
  return self.reshape(grouped).transpose(1, 2).reshape(self.sizes()).contiguous(self.suggest_memory_format());
}

at::Tensor crossed(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  TORCH_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "linalg.cross: expected self and other to have the same dtype");
  const auto sizes = at::infer_size(self.sizes(), other.sizes());
  const int64_t d = c10::maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  TORCH_CHECK(self.size(d) == 3 && other.size(d) == 3, "linalg.cross: inputs dimension ", dim, " must have length 3. Got ",
              self.size(d), " and ", other.size(d));
  const at::Tensor a = self.expand(sizes), b = other.expand(sizes);
  auto part = [&](const at::Tensor& t, int64_t i) { return t.select(d, i); };
  return at::stack({part(a, 1) * part(b, 2) - part(a, 2) * part(b, 1), part(a, 2) * part(b, 0) - part(a, 0) * part(b, 2),
                    part(a, 0) * part(b, 1) - part(a, 1) * part(b, 0)},
                   d);
}

// Element i of self (in row-major order) takes source's element k when it is the k-th true element of
// the mask. The CPU refuses a source shorter than the mask's count: checked on the device before self
// is written (the check waits: an op writing into self must leave it untouched when it raises).
at::Tensor& masked_scatter_inplace(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "masked_scatter_: expected self and source to have same ",
              "dtypes but got ", self.scalar_type(), " and ", source.scalar_type());
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  if (self.numel() == 0) return self;
  const at::Tensor selected = mask.expand(self.sizes()).reshape({-1});
  const at::Tensor position = selected.cumsum(0).sub_(1); // of each element's source, -1 before the first
  const int64_t n = position.numel();
  check_index_range(position.narrow(0, n - 1, 1), -1, source.numel(), "masked_scatter_",
                    "Number of elements of source < number of ones in mask", std::nullopt, true, false);
  if (source.numel() == 0) return self; // the mask has no true element
  at::Tensor gathered;
  {
    PositionsChecked checked; // every position lies in [0, source.numel()) now
    gathered = source.reshape({-1}).index_select(0, position.clamp_min(0));
  }
  return self.copy_(at::where(selected, gathered, self.reshape({-1})).view(self.sizes()));
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/composed_ops.inc"

} // namespace
} // namespace torch_dml::aten
