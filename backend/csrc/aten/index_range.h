// Index ranges checked on the device, not read back: a read would wait for all the work queued before
// the op (runtime/device_checks.h). A failure raises IndexError at the next wait for the device.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

namespace torch_dml::aten {

// Every value of `index` (int64 or int32, on dml) must lie in [low, high) or equal `allowed`; else
// `op` fails with `message` ("{}" where the failing value goes). Nothing is recorded for an empty index.
// `writes`: the op writes into an existing tensor, so the check waits and raises at the op, before
// anything is written. `index_error`: raised as IndexError, else RuntimeError (as the CPU raises for some ops).
void check_index_range(const at::Tensor& index, int64_t low, int64_t high, const std::string& op,
                       const std::string& message, std::optional<int64_t> allowed = std::nullopt,
                       bool writes = false, bool index_error = true);

// Within its scope check_index_range records nothing on this thread: for an op that turns indices it
// already checked into positions and hands them to another checking op (index_put_ with accumulate and
// scatter_add add through index_add_), where a second check would only cost a second wait.
class PositionsChecked {
 public:
  PositionsChecked();
  ~PositionsChecked();
  PositionsChecked(const PositionsChecked&) = delete;
  PositionsChecked& operator=(const PositionsChecked&) = delete;
};

} // namespace torch_dml::aten
