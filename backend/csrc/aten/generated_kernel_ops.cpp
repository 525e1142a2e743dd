#include "aten/generated_kernel_ops.h"

#include <c10/core/DeviceGuard.h>

#include <mutex>

#include "aten/common.h"
#include "kernels/generated_kernel.h"

namespace torch_dml::aten {
namespace {

// Elements from the tensor's first one that its strides can reach: what the window must hold.
uint64_t extent_of(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  uint64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    TORCH_CHECK(t.stride(d) >= 0, "torch_dml: generated kernel operand has a negative stride");
    last += static_cast<uint64_t>(t.size(d) - 1) * static_cast<uint64_t>(t.stride(d));
  }
  return last + 1;
}

} // namespace

void launch_wgsl(const std::string& name, const std::string& source, const std::vector<at::Tensor>& tensors,
                 const std::string& scalars, uint64_t groups) {
  TORCH_CHECK(!tensors.empty(), "torch_dml: generated kernel ", name, " binds no tensors");
  const c10::Device device = tensors.front().device();
  std::vector<kernels::GeneratedOperand> operands;
  operands.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(t.device() == device, "torch_dml: generated kernel ", name, " takes tensors on ", device,
                " and ", t.device(), "; all must be on one dml device");
    operands.push_back({device_ref(t), extent_of(t)});
  }
  c10::DeviceGuard guard(device);
  runtime::DeviceContext& context = context_of(tensors.front());
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernels::launch_generated(context, name, source, operands, scalars, groups);
}

} // namespace torch_dml::aten
