// torch_dml._C._launch_wgsl: a WGSL kernel written at run time (torch.compile's Inductor backend)
// launched over tensors (kernels/generated_kernel.h has the layout the WGSL follows).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torch_dml::aten {

void launch_wgsl(const std::string& name, const std::string& source, const std::vector<at::Tensor>& tensors,
                 const std::string& scalars, uint64_t groups);

} // namespace torch_dml::aten
