// Device -> host reads of the command stream, through reused mapped readback buffers.
//
// WebGPU cannot map memory the device uses, so bytes come back through MAP_READ buffers: the device
// copies into one, the host maps it, copies out and unmaps. The buffers live as long as the device, so
// a read creates none (nor pays the page faults of a fresh mapping); large reads go in 8 MiB chunks
// through two of them, the device copying the next chunk while the host drains the current one.
#include <c10/util/Exception.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/buffer_map.h"
#include "runtime/device.h"
#include "runtime/device_checks.h"
#include "runtime/device_wait.h"
#include "runtime/staging.h"
#include "runtime/stream.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

// Large enough that a chunk's submit and map (tens of microseconds) are a few percent of its copy,
// small enough that two per device cost little to keep.
constexpr uint64_t kChunk = 8ull << 20;
// .item() and small tensors map a small buffer of their own rather than megabytes.
constexpr uint64_t kSmall = 64ull << 10;
constexpr int kMaxDevices = 64;

struct Readback {
  webgpu::Buffer buffer;
  uint64_t size = 0;
  WGPUSubmissionIndex last_use = 0;
};

// A device's readback buffers: slot 0 small, slots 1 and 2 the chunk pair.
struct ReadbackBuffers {
  Readback slots[3];
  // Requests whose buffer was given up after a failed map: wgpu may still answer them.
  std::vector<std::unique_ptr<MapRequest>> abandoned;
  // The last answered request, reused by the next map: `.item()` maps once per call.
  std::unique_ptr<MapRequest> spare;
  bool fail_next_map = false;
};

// Kept per device index, like the pipeline cache, since devices live as long as the process; used
// under the device lock. Read on every `.item()` without a global lock: a slot is filled once.
ReadbackBuffers& readback_buffers(int device) {
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "torch_dml: device index ", device, " beyond ", kMaxDevices);
  static std::array<std::atomic<ReadbackBuffers*>, kMaxDevices> all;
  ReadbackBuffers* buffers = all[device].load(std::memory_order_acquire);
  if (buffers) return *buffers;
  static std::mutex guard;
  std::lock_guard<std::mutex> lock(guard);
  buffers = all[device].load(std::memory_order_relaxed);
  if (!buffers) {
    buffers = new ReadbackBuffers(); // never freed: its buffers outlive static destruction order
    all[device].store(buffers, std::memory_order_release);
  }
  return *buffers;
}

uint64_t round_up(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

Readback& readback(DeviceContext& context, ReadbackBuffers& buffers, int slot) {
  Readback& stage = buffers.slots[slot];
  if (stage.buffer) return stage;
  stage.size = slot == 0 ? kSmall : kChunk;
  stage.buffer = context.create_buffer(stage.size, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                       "torch_dml readback staging");
  return stage;
}

// Maps [0, size) of `stage` once the submission that filled it is done: only that one is waited for,
// so a chunk copied after it keeps the device busy meanwhile. A failed map gives the buffer up and
// raises.
const uint8_t* map(DeviceContext& context, ReadbackBuffers& buffers, Readback& stage, uint64_t size) {
  std::unique_ptr<MapRequest> request = buffers.spare ? std::move(buffers.spare) : std::make_unique<MapRequest>();
  request->reset();
  const uint64_t asked = std::exchange(buffers.fail_next_map, false) ? stage.size + 8 : size;
  wgpu().BufferMapAsync(stage.buffer.get(), WGPUMapMode_Read, 0, asked, request->callback());
  wait_for(context, &stage.last_use, [&request] { return request->done; });
  if (request->done && request->status == WGPUMapAsyncStatus_Success) {
    const void* mapped = wgpu().BufferGetConstMappedRange(stage.buffer.get(), 0, size);
    if (mapped) {
      buffers.spare = std::move(request);
      return static_cast<const uint8_t*>(mapped);
    }
    wgpu().BufferUnmap(stage.buffer.get());
  }
  const std::string message = request->failure();
  buffers.abandoned.push_back(std::move(request));
  stage = Readback{};
  context.check("mapping a readback buffer"); // wgpu's own account of the failure, when it gave one
  TORCH_CHECK(false, "torch_dml: mapping a readback buffer failed on ", context.describe(), ": ", message);
}

} // namespace

void fail_next_staging_map(int device) {
  DeviceContext& context = device_context(device);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  readback_buffers(device).fail_next_map = true;
}

void CommandStream::read(WGPUBuffer buffer, uint64_t offset, void* data, uint64_t size) {
  if (size == 0) return;
  std::lock_guard<std::recursive_mutex> lock(context_.mutex());
  static const std::string reading = "reading back from the device"; // built once, not per `.item()`
  context_.check_alive(reading);
  ReadbackBuffers& buffers = readback_buffers(context_.index());
  ++wait_count_;
  // Copies move whole words: read the words around [offset, offset + size), keep the bytes asked for.
  const uint64_t begin = offset / 4 * 4;
  const uint64_t end = round_up(offset + size, 4);
  const bool small = end - begin <= kSmall;
  auto slot_of = [small](uint64_t chunk) { return small ? 0 : 1 + static_cast<int>(chunk % 2); };
  auto enqueue = [&](uint64_t chunk) {
    const uint64_t from = begin + chunk * kChunk;
    Readback& stage = readback(context_, buffers, slot_of(chunk));
    ensure_encoder();
    end_pass();
    wgpu().CommandEncoderCopyBufferToBuffer(encoder_.get(), buffer, from, stage.buffer.get(), 0,
                                            std::min(kChunk, end - from));
    flush();
    stage.last_use = last_submission_;
  };

  auto* out = static_cast<uint8_t*>(data);
  // Pending device checks travel back with the first chunk, in its submission.
  const bool checking = copy_out_checks();
  enqueue(0);
  const WGPUSubmissionIndex checked = last_submission_;
  for (uint64_t chunk = 0, from = begin; from < end; ++chunk) {
    const uint64_t next = std::min(from + kChunk, end);
    if (next < end) enqueue(chunk + 1);
    Readback& stage = buffers.slots[slot_of(chunk)];
    const uint8_t* mapped = map(context_, buffers, stage, next - from);
    const uint64_t keep_from = std::max(from, offset), keep_to = std::min(next, offset + size);
    std::memcpy(out + (keep_from - offset), mapped + (keep_from - from), keep_to - keep_from);
    wgpu().BufferUnmap(stage.buffer.get());
    from = next;
  }
  if (checking) checks_->collect(checked);
  if (checks_) checks_->raise();
}

} // namespace torch_dml::runtime
