// Host -> device writes of the command stream; large ones through reused mapped upload buffers.
//
// wgpuQueueWriteBuffer copies the bytes into a host-visible staging buffer that wgpu-native creates
// for that one call and destroys after the next submit: for a large tensor a fresh allocation of its
// whole size, page faults on first touch, one memcpy, and the device copy only at the next submit. Large
// writes go instead in 8 MiB chunks through three MAP_WRITE buffers that live as long as the command
// stream (runtime/uploads.h), as the readback buffers live as long as the device
// (runtime/transfers.cpp): the host fills one while the device copies the chunks before it out of the
// others. Every byte is in a staging buffer when the call returns, so the caller may free its memory at
// once (a pageable copy, complete from the host's point of view).
//
// Like the readback buffers these are host-side transfer memory, outside the device allocator, and so
// outside torch.dml.memory_allocated() and the other memory statistics.
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device.h"
#include "runtime/device_wait.h"
#include "runtime/stream.h"
#include "runtime/uploads.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

// As for reads: a chunk's map and submit (tens of microseconds) are a few percent of its copy.
constexpr uint64_t kChunk = 8ull << 20;
// Up to here a queue write stays: wgpu's staging for it is a small sub-allocation, and it needs no
// submit of its own. On lavapipe a queue write of 64 KiB costs about what a chunk's submit, map and
// wait do (~50 us against ~45), 16 KiB a third of it (docs/benchmarks.md).
constexpr uint64_t kQueueWriteMax = 64ull << 10;

using Upload = UploadBuffers::Slot;

[[noreturn]] void give_up(DeviceContext& context, Upload& stage, const std::string& message) {
  stage = Upload{};
  context.check("mapping an upload buffer"); // wgpu's own account of the failure, when it gave one
  TORCH_CHECK(false, "torch_dml: mapping an upload buffer failed on ", context.describe(), ": ", message);
}

// Where the host may write the slot's `size` bytes. A new buffer is created mapped; a used one is
// mapped again here, when it is needed, rather than right after its submit: the wait that needs the
// answer is the poll that delivers it, and a failed map then raises in the write that asked for it
// (asked at submit, its error would surface in whatever op polled next).
uint8_t* acquire(DeviceContext& context, UploadBuffers& buffers, Upload& stage, uint64_t size) {
  if (stage.mapped) return stage.mapped;
  if (!stage.buffer) {
    stage.buffer = context.create_buffer(size, WGPUBufferUsage_MapWrite | WGPUBufferUsage_CopySrc,
                                         "torch_dml upload staging", /*mapped_at_creation=*/true);
    stage.size = size;
    stage.mapped = static_cast<uint8_t*>(wgpu().BufferGetMappedRange(stage.buffer.get(), 0, size));
    if (!stage.mapped) give_up(context, stage, "no mapped range");
    return stage.mapped;
  }
  MapRequest& request = *buffers.request;
  request.reset();
  const uint64_t asked = std::exchange(buffers.fail_next_map, false) ? stage.size + 8 : stage.size;
  wgpu().BufferMapAsync(stage.buffer.get(), WGPUMapMode_Write, 0, asked, request.callback());
  wait_for(context, &stage.last_use, [&request] { return request.done; });
  if (request.done && request.status == WGPUMapAsyncStatus_Success) {
    stage.mapped = static_cast<uint8_t*>(wgpu().BufferGetMappedRange(stage.buffer.get(), 0, stage.size));
    if (stage.mapped) return stage.mapped;
    wgpu().BufferUnmap(stage.buffer.get());
  }
  const std::string message = request.failure();
  buffers.abandoned.push_back(std::exchange(buffers.request, std::make_unique<MapRequest>()));
  give_up(context, stage, message);
}

} // namespace

void CommandStream::fail_next_upload_map() {
  std::lock_guard<std::recursive_mutex> lock(context_.mutex());
  if (!uploads_) uploads_ = std::make_unique<UploadBuffers>();
  uploads_->fail_next_map = true;
}

void CommandStream::write(WGPUBuffer buffer, uint64_t offset, const void* data, uint64_t size) {
  if (size == 0) return;
  TORCH_INTERNAL_ASSERT(offset % 4 == 0 && size % 4 == 0);
  std::lock_guard<std::recursive_mutex> lock(context_.mutex());
  if (size <= kQueueWriteMax) {
    // A queue write lands before everything still unsubmitted: submit first what uses the buffer.
    if (pending_buffers_.count(buffer)) flush();
    wgpu().QueueWriteBuffer(context_.queue(), buffer, offset, data, size);
    context_.check("uploading to the device");
    return;
  }
  static const std::string uploading = "uploading to the device";
  context_.check_alive(uploading);
  if (!uploads_) uploads_ = std::make_unique<UploadBuffers>();
  UploadBuffers& buffers = *uploads_;
  const uint64_t chunk = std::min<uint64_t>(kChunk, context_.limits().maxBufferSize / 4 * 4);
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (uint64_t from = 0; from < size;) {
    const uint64_t length = std::min(chunk, size - from);
    Upload& stage = buffers.slots[buffers.next];
    std::memcpy(acquire(context_, buffers, stage, chunk), bytes + from, length);
    wgpu().BufferUnmap(stage.buffer.get());
    stage.mapped = nullptr;
    buffers.next = (buffers.next + 1) % UploadBuffers::kSlots;
    // Recorded in the open encoder, the copy follows the kernels recorded before it and precedes those
    // recorded after, so unlike a queue write it needs no flush for order. It is submitted at once so
    // that the device copies this chunk while the host fills the next, and the buffer can be remapped.
    ensure_encoder();
    end_pass();
    wgpu().CommandEncoderCopyBufferToBuffer(encoder_.get(), stage.buffer.get(), 0, buffer, offset + from, length);
    flush();
    stage.last_use = last_submission_;
    from += length;
  }
}

} // namespace torch_dml::runtime
