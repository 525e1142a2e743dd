// Input checks that do not stop the device. An index op must refuse an index out of range, but reading
// the index's bounds back before launching (as CPU kernels check) waits for everything queued before
// it: a classifier's loss or an embedding lookup then drained the GPU once or twice per training step.
// Instead a one-thread kernel (kernels/index_check.h) compares the bounds, reduced on the device, and
// writes the first failed check into this record; the host reads the record with the data of its next
// wait (CommandStream::read, synchronize) and raises the check's error there, as an IndexError naming
// the op: CUDA's device-side asserts, without the broken context. Until then the op's result is what
// WebGPU's bounds-clamped loads gave; nothing outside its output is touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/buffer_map.h"
#include "runtime/stream.h"
#include "webgpu/handle.h"

namespace torch_dml::runtime {

class DeviceContext;

class DeviceChecks {
 public:
  // Checks recorded without a wait before the stream waits anyway, so the list stays short.
  static constexpr size_t kMaxPending = 1024;

  explicit DeviceChecks(DeviceContext& context);

  // The record a check kernel binds: the failed check's id (0: none failed), then the value (2 words).
  StorageBinding record() const { return {record_.get(), 0, kRecordBytes}; }
  // A check to be recorded next: the id its kernel writes. `message` is the error, with "{}" where the
  // failing value goes; raised as IndexError (else RuntimeError, as the CPU raises for some ops).
  // `at_op`: the op waits for it and raises itself.
  uint32_t add(std::string op, std::string message, bool index_error, bool at_op);
  bool armed() const { return !pending_.empty(); }
  size_t pending() const { return pending_.size(); }

  // Copies the record out, after everything recorded in `encoder` so far.
  void copy_out(WGPUCommandEncoder encoder);
  // Once `submission` (the one with copy_out) is done: reads the record, forgets the pending checks,
  // and keeps the first failure for raise(). Waits for the submission itself if it is not done yet.
  void collect(WGPUSubmissionIndex submission);
  // Throws the failure collect() kept, if any (c10::IndexError), and forgets it.
  void raise();

 private:
  static constexpr uint64_t kRecordBytes = 16;
  struct Check {
    std::string op, message;
    bool index_error = true, at_op = false;
  };

  DeviceContext& context_;
  webgpu::Buffer record_;
  webgpu::Buffer readback_;
  MapRequest request_;
  std::vector<Check> pending_;
  std::string failure_;
  bool failure_is_index_error_ = true;
};

// Whether TORCH_DML_SYNC_CHECKS=1 asks every check to wait and raise at its own op (for debugging, as
// CUDA_LAUNCH_BLOCKING=1 does).
bool synchronous_checks();

} // namespace torch_dml::runtime
