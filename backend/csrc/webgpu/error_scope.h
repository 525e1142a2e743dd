// Error scopes around calls whose failure must become an exception (buffer creation, shader
// compilation) rather than an uncaptured error: the pop callback fires inside the pop call.
#pragma once

#include <optional>
#include <string>

#include "webgpu/procs.h"

namespace torch_dml::webgpu {

struct ScopedError {
  WGPUErrorType type;
  std::string message;
};

class ErrorScope {
 public:
  explicit ErrorScope(WGPUDevice device);
  ~ErrorScope(); // pops whatever is still pushed, discarding it
  ErrorScope(const ErrorScope&) = delete;
  ErrorScope& operator=(const ErrorScope&) = delete;

  // Pops the scopes; returns the first error caught (out-of-memory before validation), if any.
  std::optional<ScopedError> pop();

 private:
  WGPUDevice device_;
  bool open_ = true;
};

} // namespace torch_dml::webgpu
