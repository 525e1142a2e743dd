#include "runtime/stream.h"

#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>
#include <c10/util/ScopeExit.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/device.h"
#include "runtime/device_checks.h"
#include "runtime/device_wait.h"
#include "runtime/dispatch_timer.h"
#include "runtime/uploads.h"

namespace torch_dml::runtime {
namespace {

using webgpu::wgpu;

constexpr uint64_t kParamsCapacity = 256ull << 10;
// Beyond this many cached bind groups the cache starts over: a workload that keeps making new
// tensors would otherwise grow it without bound (and keep the buffers it names alive).
constexpr size_t kMaxBindGroups = 4096;

uint64_t round_up(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

} // namespace

// Kernel parameters the ring already holds, found by content: a loop that repeats its dispatches (a
// training step, `tiny op + .item()`) then records no new bytes, and a submit with none skips the
// queue write, which in wgpu-native creates a staging buffer and one more command buffer per submit.
//
// The ring fills upwards across submits (a batch's new bytes go at `batch_base`); when it is full it
// starts again at 0 and forgets what it held. Overwriting is safe because queue writes are ordered with
// submissions. `shadow` mirrors the ring's bytes so a hash match is confirmed byte for byte. One per
// stream, as the ring is.
struct CommandStream::ParamsReuse {
  struct Entry {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t size = 0; // 0: empty
  };
  static constexpr size_t kEntries = 4096; // direct-mapped: a clash replaces, it never allocates
  std::vector<uint8_t> shadow;
  std::vector<Entry> entries = std::vector<Entry>(kEntries);
  uint64_t batch_base = 0;

  void forget() {
    std::fill(entries.begin(), entries.end(), Entry{});
    batch_base = 0;
  }
};

namespace {

// A word at a time: parameter blocks are hundreds of bytes and hashed on every dispatch, and a clash
// only costs a miss (the bytes are compared before any reuse).
uint64_t hash_params(const void* params, size_t size, uint32_t binding_size) {
  const auto* bytes = static_cast<const uint8_t*>(params);
  uint64_t h = (static_cast<uint64_t>(binding_size) << 32 | size) * 0x9E3779B97F4A7C15ull;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    h = (h ^ word) * 0xFF51AFD7ED558CCDull;
  }
  if (i < size) {
    uint64_t tail = 0;
    std::memcpy(&tail, bytes + i, size - i);
    h = (h ^ tail) * 0xFF51AFD7ED558CCDull;
  }
  // Products only carry bits upwards: fold the high half down before the table takes the low bits.
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}

bool all_zero(const uint8_t* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (bytes[i]) return false;
  return true;
}

uint32_t flush_every_from_env() {
  // 32 dispatches per submit: ORT uses 16, CubeCL 32; much larger batches leave the GPU idle while the
  // CPU records.
  const char* value = std::getenv("TORCH_DML_FLUSH_EVERY");
  const long parsed = value ? std::strtol(value, nullptr, 10) : 0;
  return parsed > 0 ? static_cast<uint32_t>(parsed) : 32u;
}

} // namespace

bool BindGroupKey::operator==(const BindGroupKey& other) const {
  if (storage_count != other.storage_count || params_size != other.params_size) return false;
  for (uint32_t i = 0; i < storage_count; ++i) {
    const StorageBinding &a = bindings[i], &b = other.bindings[i];
    if (a.buffer != b.buffer || a.offset != b.offset || a.size != b.size) return false;
  }
  return true;
}

size_t BindGroupKeyHash::operator()(const BindGroupKey& key) const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(key.storage_count) << 32 | key.params_size);
  auto mix = [&h](uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  };
  for (uint32_t i = 0; i < key.storage_count; ++i) {
    mix(reinterpret_cast<uintptr_t>(key.bindings[i].buffer));
    mix(key.bindings[i].offset);
    mix(key.bindings[i].size);
  }
  return static_cast<size_t>(h);
}

CommandStream::CommandStream(DeviceContext& context)
    : context_(context),
      flush_every_(flush_every_from_env()),
      params_capacity_(kParamsCapacity),
      params_alignment_(std::max<uint32_t>(context.limits().minUniformBufferOffsetAlignment, 16u)) {
  params_ring_ = context_.create_buffer(params_capacity_, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst,
                                        "torch_dml kernel parameters");
  params_.reserve(params_capacity_);
  reuse_ = std::make_unique<ParamsReuse>();
  reuse_->shadow.assign(params_capacity_, 0);
}

CommandStream::~CommandStream() = default;

WGPUPipelineLayout CommandStream::pipeline_layout(uint32_t storage_count) {
  auto found = layouts_.find(storage_count);
  if (found != layouts_.end()) return found->second.pipeline.get();

  std::vector<WGPUBindGroupLayoutEntry> entries(storage_count + 1);
  for (uint32_t i = 0; i <= storage_count; ++i) {
    WGPUBindGroupLayoutEntry entry = WGPU_BIND_GROUP_LAYOUT_ENTRY_INIT;
    entry.binding = i;
    entry.visibility = WGPUShaderStage_Compute;
    entry.buffer.type = i < storage_count ? WGPUBufferBindingType_Storage : WGPUBufferBindingType_Uniform;
    entry.buffer.hasDynamicOffset = i == storage_count;
    entries[i] = entry;
  }
  WGPUBindGroupLayoutDescriptor group_descriptor = WGPU_BIND_GROUP_LAYOUT_DESCRIPTOR_INIT;
  group_descriptor.entryCount = entries.size();
  group_descriptor.entries = entries.data();
  Layout layout;
  layout.group = webgpu::BindGroupLayout(wgpu().DeviceCreateBindGroupLayout(context_.device(), &group_descriptor));
  WGPUBindGroupLayout groups[] = {layout.group.get()};
  WGPUPipelineLayoutDescriptor pipeline_descriptor = WGPU_PIPELINE_LAYOUT_DESCRIPTOR_INIT;
  pipeline_descriptor.bindGroupLayoutCount = 1;
  pipeline_descriptor.bindGroupLayouts = groups;
  layout.pipeline = webgpu::PipelineLayout(wgpu().DeviceCreatePipelineLayout(context_.device(), &pipeline_descriptor));
  context_.check("creating a pipeline layout");
  WGPUPipelineLayout result = layout.pipeline.get();
  layouts_.emplace(storage_count, std::move(layout));
  return result;
}

void CommandStream::ensure_encoder() {
  if (encoder_) return;
  static const std::string recording = "recording commands"; // built once, not per submit
  context_.check_alive(recording);
  WGPUCommandEncoderDescriptor descriptor = WGPU_COMMAND_ENCODER_DESCRIPTOR_INIT;
  encoder_ = webgpu::CommandEncoder(wgpu().DeviceCreateCommandEncoder(context_.device(), &descriptor));
}

void CommandStream::ensure_pass() {
  ensure_encoder();
  if (pass_) return;
  WGPUComputePassDescriptor descriptor = WGPU_COMPUTE_PASS_DESCRIPTOR_INIT;
  pass_ = webgpu::ComputePass(wgpu().CommandEncoderBeginComputePass(encoder_.get(), &descriptor));
  pass_pipeline_ = nullptr;
}

void CommandStream::end_pass() {
  if (!pass_) return;
  wgpu().ComputePassEncoderEnd(pass_.get());
  pass_.reset();
  pass_pipeline_ = nullptr;
}

WGPUBindGroup CommandStream::bind_group(const BindGroupKey& key) {
  auto found = bind_groups_.find(key);
  if (found != bind_groups_.end()) return found->second.get();
  if (bind_groups_.size() >= kMaxBindGroups) bind_groups_.clear();

  WGPUBindGroupEntry entries[kMaxStorageBindings + 1];
  for (uint32_t i = 0; i < key.storage_count; ++i) {
    WGPUBindGroupEntry entry = WGPU_BIND_GROUP_ENTRY_INIT;
    entry.binding = i;
    entry.buffer = key.bindings[i].buffer;
    entry.offset = key.bindings[i].offset;
    entry.size = key.bindings[i].size;
    entries[i] = entry;
  }
  WGPUBindGroupEntry uniform = WGPU_BIND_GROUP_ENTRY_INIT;
  uniform.binding = key.storage_count;
  uniform.buffer = params_ring_.get();
  uniform.offset = 0;
  uniform.size = key.params_size;
  entries[key.storage_count] = uniform;

  pipeline_layout(key.storage_count); // makes sure the layout exists
  WGPUBindGroupDescriptor descriptor = WGPU_BIND_GROUP_DESCRIPTOR_INIT;
  descriptor.layout = layouts_.at(key.storage_count).group.get();
  descriptor.entryCount = key.storage_count + 1;
  descriptor.entries = entries;
  webgpu::BindGroup group(wgpu().DeviceCreateBindGroup(context_.device(), &descriptor));
  context_.check("binding kernel arguments");
  ++bind_groups_created_;
  WGPUBindGroup result = group.get();
  bind_groups_.emplace(key, std::move(group));
  return result;
}

void CommandStream::dispatch(WGPUComputePipeline pipeline, uint32_t storage_count, const StorageBinding* bindings,
                             const void* params, size_t params_size, uint32_t groups_x, uint32_t groups_y,
                             uint32_t groups_z) {
  if (timer_) [[unlikely]] {
    timed_dispatch(pipeline, storage_count, bindings, params, params_size, groups_x, groups_y, groups_z);
    return;
  }
  record_dispatch<false>(pipeline, storage_count, bindings, params, params_size, groups_x, groups_y, groups_z);
}

void CommandStream::timed_dispatch(WGPUComputePipeline pipeline, uint32_t storage_count,
                                   const StorageBinding* bindings, const void* params, size_t params_size,
                                   uint32_t groups_x, uint32_t groups_y, uint32_t groups_z) {
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  if (timer_->device_clock()) {
    if (timer_->full()) flush();
    record_dispatch<true>(pipeline, storage_count, bindings, params, params_size, groups_x, groups_y, groups_z);
    return;
  }
  // No timestamps on this device: the dispatch runs alone, and the host's wall time around it is its
  // duration (submit and wait included).
  synchronize();
  const int64_t start = c10::getTime();
  record_dispatch<false>(pipeline, storage_count, bindings, params, params_size, groups_x, groups_y, groups_z);
  synchronize();
  timer_->record_host(pipeline, groups_x, groups_y, groups_z, start, c10::getTime());
}

template <bool kTimed>
void CommandStream::record_dispatch(WGPUComputePipeline pipeline, uint32_t storage_count,
                                    const StorageBinding* bindings, const void* params, size_t params_size,
                                    uint32_t groups_x, uint32_t groups_y, uint32_t groups_z) {
  if (groups_x == 0 || groups_y == 0 || groups_z == 0) return;
  TORCH_INTERNAL_ASSERT(storage_count <= kMaxStorageBindings);
  const uint32_t binding_size = static_cast<uint32_t>(round_up(std::max<size_t>(params_size, 16), 16));
  ParamsReuse& reuse = *reuse_;
  const uint64_t hash = hash_params(params, params_size, binding_size);
  ParamsReuse::Entry& entry = reuse.entries[hash % ParamsReuse::kEntries];
  uint64_t params_offset = 0;
  if (entry.size == binding_size && entry.hash == hash &&
      (params_size == 0 || std::memcmp(reuse.shadow.data() + entry.offset, params, params_size) == 0) &&
      all_zero(reuse.shadow.data() + entry.offset + params_size, binding_size - params_size)) {
    params_offset = entry.offset;
  } else {
    const uint64_t slot = round_up(binding_size, params_alignment_);
    if (reuse.batch_base + params_.size() + slot > params_capacity_) {
      flush();
      // Nothing recorded refers to the ring now (a batch with no dispatch has no encoder to flush).
      params_.clear();
      reuse.forget();
    }
    const uint64_t in_batch = params_.size();
    params_offset = reuse.batch_base + in_batch;
    params_.resize(in_batch + slot, 0);
    if (params_size) std::memcpy(params_.data() + in_batch, params, params_size);
    std::memcpy(reuse.shadow.data() + params_offset, params_.data() + in_batch, slot);
    entry = {hash, static_cast<uint32_t>(params_offset), binding_size};
  }

  BindGroupKey key;
  key.storage_count = storage_count;
  key.params_size = binding_size;
  for (uint32_t i = 0; i < storage_count; ++i) {
    key.bindings[i] = bindings[i];
    note_use(bindings[i].buffer);
  }
  WGPUBindGroup group = bind_group(key);

  ensure_pass();
  if (pass_pipeline_ != pipeline) {
    wgpu().ComputePassEncoderSetPipeline(pass_.get(), pipeline);
    pass_pipeline_ = pipeline;
  }
  const uint32_t dynamic_offset = static_cast<uint32_t>(params_offset);
  wgpu().ComputePassEncoderSetBindGroup(pass_.get(), 0, group, 1, &dynamic_offset);
  if constexpr (kTimed) timer_->begin(pass_.get(), pipeline, groups_x, groups_y, groups_z);
  wgpu().ComputePassEncoderDispatchWorkgroups(pass_.get(), groups_x, groups_y, groups_z);
  if constexpr (kTimed) timer_->end(pass_.get());
  ++dispatch_count_;
  if (++pending_dispatches_ >= flush_every_) flush();
}

void CommandStream::copy_buffer(WGPUBuffer src, uint64_t src_offset, WGPUBuffer dst, uint64_t dst_offset,
                                uint64_t size) {
  if (size == 0) return;
  TORCH_INTERNAL_ASSERT(src_offset % 4 == 0 && dst_offset % 4 == 0 && size % 4 == 0);
  ensure_encoder();
  end_pass();
  wgpu().CommandEncoderCopyBufferToBuffer(encoder_.get(), src, src_offset, dst, dst_offset, size);
  note_use(src);
  note_use(dst);
  ++pending_dispatches_;
}

void CommandStream::flush() {
  if (!encoder_) return;
  end_pass();
  if (timer_) timer_->resolve(encoder_.get());
  WGPUCommandBufferDescriptor descriptor = WGPU_COMMAND_BUFFER_DESCRIPTOR_INIT;
  webgpu::CommandBuffer commands(wgpu().CommandEncoderFinish(encoder_.get(), &descriptor));
  encoder_.reset();
  pending_buffers_.clear();
  pending_dispatches_ = 0;
  // The parameters go with the commands, also when the check below throws; then the ring never gets
  // them, and what was remembered as in it is forgotten. params_ keeps its capacity.
  ParamsReuse& reuse = *reuse_;
  bool uploaded = params_.empty();
  const auto drop_params = c10::make_scope_exit([&] {
    params_.clear();
    if (!uploaded) reuse.forget();
  });
  // A command buffer whose Finish failed aborts the process if submitted: report and drop it.
  context_.check("finishing recorded commands");
  // wgpu copies the bytes before it returns, so the vector is free for the next batch at once.
  if (!params_.empty()) {
    wgpu().QueueWriteBuffer(context_.queue(), params_ring_.get(), reuse.batch_base, params_.data(), params_.size());
    reuse.batch_base += params_.size();
    uploaded = true;
  }
  WGPUCommandBuffer raw = commands.get();
  last_submission_ = wgpu().QueueSubmitForIndex(context_.queue(), 1, &raw);
  submitted_ = true;
  ++submit_count_;
  context_.check("submitting recorded commands");
}

void CommandStream::synchronize() {
  ++wait_count_;
  const bool checking = copy_out_checks();
  flush();
  if (checking)
    checks_->collect(last_submission_); // its map waits for everything submitted
  else if (submitted_)
    wait_for(context_, &last_submission_, [] { return false; });
  if (submitted_) context_.check("synchronizing");
  if (checks_) checks_->raise();
}

DeviceChecks& CommandStream::checks() {
  if (!checks_) checks_ = std::make_unique<DeviceChecks>(context_);
  return *checks_;
}

bool CommandStream::copy_out_checks() {
  if (!checks_ || !checks_->armed()) return false;
  ensure_encoder();
  end_pass();
  checks_->copy_out(encoder_.get());
  return true;
}

void CommandStream::start_timing() {
  if (timer_) return;
  synchronize();
  timer_ = std::make_unique<DispatchTimer>(context_);
}

void CommandStream::stop_timing(std::vector<DispatchTiming>& out) {
  if (!timer_) return;
  synchronize();
  std::unique_ptr<DispatchTimer> timer = std::move(timer_);
  timer->collect(pipeline_labels_, out);
}

void CommandStream::label_pipeline(WGPUComputePipeline pipeline, std::string name) {
  pipeline_labels_[pipeline] = std::move(name);
}

bool CommandStream::query() {
  flush();
  const bool empty = poll_once(context_);
  context_.check("querying the queue");
  return empty || !submitted_;
}

} // namespace torch_dml::runtime
