// The native path of an op whose kernel can say in advance whether it runs: asked first, so that a
// refusal costs nothing and the op's fallback rule takes over.
#pragma once

#include <mutex>
#include <string>

#include "runtime/device.h"

namespace torch_dml::aten {

// Runs `kernel` on `problem` under the device lock when `reason` (the kernel's unsupported_reason) has
// nothing against it; false, having run nothing, when it has (the caller falls back).
template <typename Problem>
bool run_native(runtime::DeviceContext& context, const Problem& problem,
                std::string (*reason)(runtime::DeviceContext&, const Problem&),
                void (*kernel)(runtime::DeviceContext&, const Problem&)) {
  if (!reason(context, problem).empty()) return false;
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernel(context, problem);
  return true;
}

} // namespace torch_dml::aten
