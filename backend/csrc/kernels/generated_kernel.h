// Launches a WGSL kernel written at run time (torch.compile's Inductor backend, torch_dml/compile/),
// through the same path as the built-in kernels (kernels/launch.h).
//
// Layout the generated WGSL follows: operand i is `var<storage, read_write>` at binding i, bound through
// a window like every other kernel's; the uniform block at binding n starts with the operands' element
// offsets within their windows (array<vec4<u32>, 2>, operand i at [i / 4][i % 4]), then the caller's
// scalars. The source may call the float32 helpers of kernels/wgsl/math/ (erf_, fdiv_, ...): the ones it
// reaches are appended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

struct GeneratedOperand {
  DeviceTensorRef ref;
  uint64_t extent = 0; // elements from ref.element_offset the kernel may touch (0: an empty tensor)
};

// Compiles `source` under `name` the first time on this device (the name must tell sources apart) and
// dispatches `groups` workgroups. A source naga rejects raises (c10::Error) with the source attached.
// The caller holds the device lock.
void launch_generated(runtime::DeviceContext& context, const std::string& name, const std::string& source,
                      const std::vector<GeneratedOperand>& operands, const std::string& scalars, uint64_t groups);

// Generated kernels dispatched in this process (tests count them against eager launches).
uint64_t generated_launch_count();

} // namespace torch_dml::kernels
