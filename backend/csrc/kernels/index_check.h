// Index range checks recorded on the device instead of read back (runtime/device_checks.h explains
// why): the aten ops reduce an index to its [min, max] on the device and record this check after it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/tensor_ref.h"
#include "runtime/device.h"

namespace torch_dml::kernels {

struct IndexCheck {
  DeviceTensorRef bounds;          // [min, max] of the index, int64 or int32, on the device
  int64_t low = 0, high = 0;       // the accepted range [low, high)
  std::optional<int64_t> allowed;  // a value accepted outside it (nll_loss's ignore_index)
  std::string op;                  // names the check in its error
  std::string message;             // the error, "{}" where the failing value goes
  // Wait for the check and raise at the op: for ops that write into an existing tensor, which a bad
  // index must leave untouched.
  bool at_op = false;
  bool index_error = true; // else RuntimeError, where the CPU raises that
};

// Records the check after the work recorded so far; with at_op or TORCH_DML_SYNC_CHECKS=1 waits for
// it and raises here. Takes the device lock.
void record_index_check(runtime::DeviceContext& context, const IndexCheck& check);

} // namespace torch_dml::kernels
