#include "runtime/device_checks.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "runtime/device.h"
#include "runtime/device_wait.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

std::string with_value(const std::string& message, int64_t value) {
  const size_t at = message.find("{}");
  if (at == std::string::npos) return message;
  return message.substr(0, at) + std::to_string(value) + message.substr(at + 2);
}

} // namespace

bool synchronous_checks() {
  static const bool sync = [] {
    const char* value = std::getenv("TORCH_DML_SYNC_CHECKS");
    return value && std::string_view(value) == "1";
  }();
  return sync;
}

DeviceChecks::DeviceChecks(DeviceContext& context)
    : context_(context),
      record_(context.create_buffer(kRecordBytes,
                                    WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst,
                                    "torch_dml device check record")),
      readback_(context.create_buffer(kRecordBytes, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                      "torch_dml device check readback")) {}

uint32_t DeviceChecks::add(std::string op, std::string message, bool index_error, bool at_op) {
  pending_.push_back({std::move(op), std::move(message), index_error, at_op});
  return static_cast<uint32_t>(pending_.size());
}

void DeviceChecks::copy_out(WGPUCommandEncoder encoder) {
  wgpu().CommandEncoderCopyBufferToBuffer(encoder, record_.get(), 0, readback_.get(), 0, kRecordBytes);
}

void DeviceChecks::collect(WGPUSubmissionIndex submission) {
  std::vector<Check> checks = std::exchange(pending_, {});
  request_.reset();
  wgpu().BufferMapAsync(readback_.get(), WGPUMapMode_Read, 0, kRecordBytes, request_.callback());
  wait_for(context_, &submission, [this] { return request_.done; });
  if (!request_.done) wgpu().DevicePoll(context_.device(), true, nullptr);
  const void* mapped = request_.done && request_.status == WGPUMapAsyncStatus_Success
      ? wgpu().BufferGetConstMappedRange(readback_.get(), 0, kRecordBytes)
      : nullptr;
  static constexpr uint32_t kZeros[4] = {};
  if (!mapped) {
    // The checks are forgotten unread: a failure they left must not be read against later checks' ids.
    wgpu().QueueWriteBuffer(context_.queue(), record_.get(), 0, kZeros, sizeof(kZeros));
    TORCH_CHECK(false, "torch_dml: reading the device's check record failed on ", context_.describe(), ": ",
                request_.failure());
  }
  uint32_t words[4];
  std::memcpy(words, mapped, sizeof(words));
  wgpu().BufferUnmap(readback_.get());
  if (words[0] == 0) return;
  if (failure_.empty() && words[0] <= checks.size()) {
    const Check& check = checks[words[0] - 1];
    const int64_t value = static_cast<int64_t>((static_cast<uint64_t>(words[2]) << 32) | words[1]);
    failure_ = "torch_dml: " + check.op + " on " + context_.describe() + ": " + with_value(check.message, value);
    if (!check.at_op && !synchronous_checks())
      failure_ += " (found by a check on the device, raised at the first wait for it; TORCH_DML_SYNC_CHECKS=1 "
                  "raises at the op)";
    failure_is_index_error_ = check.index_error;
  }
  wgpu().QueueWriteBuffer(context_.queue(), record_.get(), 0, kZeros, sizeof(kZeros));
}

void DeviceChecks::raise() {
  if (failure_.empty()) return;
  const std::string failure = std::exchange(failure_, {});
  TORCH_CHECK_INDEX(!failure_is_index_error_, failure);
  TORCH_CHECK(false, failure);
}

} // namespace torch_dml::runtime
