#include "aten/pool_tensors.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/empty_like.h>

namespace torch_dml::aten {

at::Tensor written_form(const at::Tensor& target) {
  if (target.scalar_type() == c10::kFloat || target.scalar_type() == c10::kDouble) return target;
  return at::empty_like(target, target.options().dtype(c10::kFloat));
}

void resize_like_input(const at::Tensor& out, at::IntArrayRef sizes, const at::Tensor& self) {
  if (at::native::resize_output(out, sizes) && self.dim() == 4)
    out.unsafeGetTensorImpl()->empty_tensor_restride(self.suggest_memory_format());
}

} // namespace torch_dml::aten
