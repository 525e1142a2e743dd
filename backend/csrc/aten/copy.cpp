// Copies between host and device and within a device, with dtype conversion and any strides on
// either side: the ops everything else (printing, .cpu(), .to(), the CPU fallback) stands on.
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "aten/common.h"
#include "runtime/allocator.h"
#include "runtime/stream.h"

namespace torch_dml::aten {
namespace {

uint64_t round_up4(uint64_t value) {
  return (value + 3) / 4 * 4;
}

// The bytes a view touches, [first, last] element of its storage, widened to whole 4-byte words.
struct ByteSpan {
  runtime::BufferSpan storage; // the storage's buffer and where the storage starts in it
  uint64_t begin = 0;          // bytes from the buffer start, 4-aligned
  uint64_t size = 0;           // bytes, a multiple of 4
  uint64_t skip = 0;           // bytes from `begin` to the view's first element
};

ByteSpan byte_span(const at::Tensor& t) {
  ByteSpan span;
  span.storage = runtime::device_allocator().resolve(t.storage().data());
  const uint64_t itemsize = t.element_size();
  uint64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += static_cast<uint64_t>(t.size(d) - 1) * t.stride(d);
  const uint64_t first_byte = span.storage.offset + t.storage_offset() * itemsize;
  const uint64_t end_byte = span.storage.offset + (last + 1) * itemsize;
  span.begin = first_byte / 4 * 4;
  span.size = round_up4(end_byte) - span.begin;
  span.skip = first_byte - span.begin;
  return span;
}

// Runs a transfer of the command stream, naming the op if it fails (the stream knows buffers, not ops).
template <typename Transfer>
void naming_op(const char* op, Transfer&& transfer) {
  try {
    transfer();
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const c10::IndexError&) {
    throw; // a failed device check (runtime/device_checks.h), which names its own op
  } catch (const c10::Error& error) {
    std::string message = error.msg();
    constexpr std::string_view prefix = "torch_dml: ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    TORCH_CHECK(false, "torch_dml: ", op, ": ", message);
  }
}

// Device -> host bytes at any offset and size.
void read_bytes(runtime::DeviceContext& context, WGPUBuffer buffer, uint64_t offset, void* host, uint64_t size,
                const char* op) {
  naming_op(op, [&] { context.stream().read(buffer, offset, host, size); });
}

// Host -> device whole words (offset and size multiples of 4).
void write_words(runtime::DeviceContext& context, WGPUBuffer buffer, uint64_t offset, const void* host,
                 uint64_t size) {
  naming_op("copy to dml", [&] { context.stream().write(buffer, offset, host, size); });
}

// A CPU copy of any dml view, whatever its layout: the bytes it spans, viewed with its strides. Exact
// for every dtype; used where no kernel applies (more than 8 dimensions after coalescing, say).
at::Tensor read_span(const at::Tensor& t) {
  const ByteSpan span = byte_span(t);
  at::Tensor bytes = at::empty({static_cast<int64_t>(span.size)}, at::TensorOptions().dtype(at::kByte));
  runtime::DeviceContext& context = context_of(t);
  {
    std::lock_guard<std::recursive_mutex> lock(context.mutex());
    read_bytes(context, span.storage.buffer, span.begin, bytes.mutable_data_ptr(), span.size, "copy from dml");
  }
  return at::from_blob(static_cast<uint8_t*>(bytes.mutable_data_ptr()) + span.skip, t.sizes(), t.strides(),
                       [bytes](void*) mutable { bytes.reset(); }, at::TensorOptions().dtype(t.scalar_type()))
      .clone();
}

// dst (any dml view) <- values (CPU): read the words dst spans, update them on the CPU, write them
// back, so the bytes between dst's elements keep their contents.
void write_span(const at::Tensor& dst, const at::Tensor& values) {
  const ByteSpan span = byte_span(dst);
  std::vector<uint8_t> bytes(span.size);
  runtime::DeviceContext& context = context_of(dst);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  read_bytes(context, span.storage.buffer, span.begin, bytes.data(), span.size, "copy to dml");
  at::from_blob(bytes.data() + span.skip, dst.sizes(), dst.strides(), at::TensorOptions().dtype(dst.scalar_type()))
      .copy_(values);
  write_words(context, span.storage.buffer, span.begin, bytes.data(), span.size);
}

// dst <- src, both on the same dml device.
void device_to_device(const at::Tensor& dst, const at::Tensor& src) {
  auto iter = at::TensorIteratorConfig()
                  .add_output(dst)
                  .add_const_input(src)
                  .resize_outputs(false)
                  .check_all_same_dtype(false)
                  .check_all_same_device(false)
                  .build();
  if (iter.numel() == 0) return;
  runtime::DeviceContext& context = context_of(dst);
  kernels::CopyGeometry geometry;
  const kernels::DeviceTensorRef to = device_ref(iter.data_ptr(0), dst.scalar_type());
  const kernels::DeviceTensorRef from = device_ref(iter.data_ptr(1), src.scalar_type());
  std::string reason = copy_geometry(iter, geometry) ? kernels::copy_unsupported_reason(context, to, &from, geometry)
                                                     : "shape or strides beyond the kernel's 32-bit limits";
  if (!reason.empty()) {
    write_span(dst, read_span(src));
    return;
  }
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  kernels::copy(context, to, from, geometry);
}

// Whether `src`'s elements occupy one gap-free byte range laid out exactly as `dst`'s do, so the
// bytes move as they are (contiguous, channels_last and any other dense permutation alike).
bool same_dense_layout(const at::Tensor& dst, const at::Tensor& src) {
  return dst.scalar_type() == src.scalar_type() && dst.sizes() == src.sizes() && dst.strides() == src.strides() &&
         src.is_non_overlapping_and_dense() && !src.is_conj() && !src.is_neg();
}

// Uploads a dense CPU tensor into a dml tensor of the same dtype, sizes and strides.
void upload_contiguous(const at::Tensor& dst, const at::Tensor& host) {
  runtime::DeviceContext& context = context_of(dst);
  const runtime::BufferSpan span = runtime::device_allocator().resolve(dst.const_data_ptr());
  const uint64_t nbytes = host.nbytes();
  const auto* bytes = static_cast<const uint8_t*>(host.const_data_ptr());
  const uint64_t whole = nbytes / 4 * 4;
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  write_words(context, span.buffer, span.offset, bytes, whole);
  if (whole == nbytes) return;
  // Writes move whole 4-byte words: the last one is padded on its own, not the whole tensor copied. Only
  // fresh allocations (offset 0, 512-byte size classes) come here, so the padding lands in the block's
  // own slack.
  uint8_t tail[4] = {};
  std::memcpy(tail, bytes + whole, nbytes - whole);
  write_words(context, span.buffer, span.offset + whole, tail, sizeof(tail));
}

void host_to_device(const at::Tensor& dst, const at::Tensor& src) {
  if (same_dense_layout(dst, src) && src.nbytes() % 4 == 0 &&
      runtime::device_allocator().resolve(dst.const_data_ptr()).offset % 4 == 0) {
    upload_contiguous(dst, src);
    return;
  }
  // Convert and broadcast on the CPU, where the semantics are PyTorch's own; move bytes once.
  at::Tensor host = src.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
  const runtime::BufferSpan span = runtime::device_allocator().resolve(dst.const_data_ptr());
  if (dst.is_contiguous() && span.offset % 4 == 0 && host.nbytes() % 4 == 0) {
    upload_contiguous(dst, host);
    return;
  }
  if (dst.dim() > kernels::kMaxRank) {
    write_span(dst, host);
    return;
  }
  c10::DeviceGuard guard(dst.device());
  at::Tensor staging = at::empty(dst.sizes(), dst.options().memory_format(c10::MemoryFormat::Contiguous));
  upload_contiguous(staging, host);
  device_to_device(dst, staging);
}

// The bytes of a dense dml view, straight into host memory laid out the same way.
void read_dense(const at::Tensor& src, void* host, const char* what) {
  const runtime::BufferSpan span = runtime::device_allocator().resolve(src.const_data_ptr());
  runtime::DeviceContext& context = context_of(src);
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  read_bytes(context, span.buffer, span.offset, host, src.nbytes(), what);
}

void device_to_host(const at::Tensor& dst, const at::Tensor& src) {
  if (same_dense_layout(dst, src)) {
    read_dense(src, dst.mutable_data_ptr(), "copy from dml to cpu");
    return;
  }
  if (src.dim() > kernels::kMaxRank || src.is_conj() || src.is_neg()) {
    at::Tensor values = read_span(src);
    if (src.is_conj()) values = values.conj();
    if (src.is_neg()) values = values._neg_view();
    const_cast<at::Tensor&>(dst).copy_(values);
    return;
  }
  at::Tensor dense = src;
  if (!src.is_non_overlapping_and_dense()) {
    c10::DeviceGuard guard(src.device());
    dense = at::empty(src.sizes(), src.options().memory_format(c10::MemoryFormat::Contiguous));
    device_to_device(dense, src);
  }
  if (same_dense_layout(dst, dense)) {
    read_dense(dense, dst.mutable_data_ptr(), "copy from dml to cpu");
    return;
  }
  // A dtype change or a different layout: PyTorch converts on the host.
  at::Tensor host = at::empty_strided(dense.sizes(), dense.strides(), dense.options().device(c10::kCPU));
  read_dense(dense, host.mutable_data_ptr(), "copy from dml to cpu");
  const_cast<at::Tensor&>(dst).copy_(host);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking: copies are ordered*/) {
  if (dst.numel() == 0) return dst;
  TORCH_CHECK(!dst.is_conj() && !dst.is_neg(), "torch_dml: copying into a conjugate or negative view is not "
              "supported; resolve it first (resolve_conj() / resolve_neg())");
  const bool from_device = self.device().type() == c10::DeviceType::PrivateUse1;
  const bool to_device = dst.device().type() == c10::DeviceType::PrivateUse1;
  // Conjugate / negative views carry their math in a bit, not in memory: kernels move bits, so such a
  // source is resolved through the host, where PyTorch applies the bit.
  if (from_device && to_device && (self.is_conj() || self.is_neg())) {
    // Not self.to(kCPU): _to_copy would resolve the bit with a device clone, i.e. come back here.
    at::Tensor host = at::empty(self.sizes(), self.options().device(c10::kCPU).dtype(dst.scalar_type()));
    device_to_host(host, self);
    host_to_device(dst, host);
    return dst;
  }
  if (from_device && to_device) {
    if (self.device() == dst.device()) device_to_device(dst, self);
    else const_cast<at::Tensor&>(dst).copy_(self.to(c10::kCPU));
  } else if (to_device) {
    TORCH_CHECK(self.device().is_cpu(), "torch_dml: copies to dml come from the CPU or dml, not ", self.device());
    host_to_device(dst, self.resolve_conj().resolve_neg());
  } else {
    TORCH_CHECK(dst.device().is_cpu(), "torch_dml: copies from dml go to the CPU or dml, not ", dst.device());
    device_to_host(dst, self);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

// .item(): the element's own bytes, read back alone, without a CPU tensor in between.
c10::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "torch_dml: a Tensor with ", self.numel(),
              " elements cannot be converted to Scalar");
  if (self.is_conj() || self.is_neg() || self.is_complex()) return self.to(c10::kCPU).item();
  alignas(16) uint8_t bytes[16] = {};
  TORCH_INTERNAL_ASSERT(self.element_size() <= static_cast<int64_t>(sizeof(bytes)));
  read_dense(self, bytes, "item()");
  switch (self.scalar_type()) {
#define TORCH_DML_SCALAR_FROM_BYTES(ctype, name) \
  case at::ScalarType::name: {                   \
    ctype value;                                 \
    std::memcpy(&value, bytes, sizeof(value));   \
    return c10::Scalar(value);                   \
  }
    AT_FORALL_SCALAR_TYPES_AND3(Bool, Half, BFloat16, TORCH_DML_SCALAR_FROM_BYTES)
#undef TORCH_DML_SCALAR_FROM_BYTES
    default:
      return at::from_blob(bytes, {}, at::TensorOptions().dtype(self.scalar_type())).item();
  }
}

// The Conjugate / Negative fallbacks would resolve the source by clone(), which copies through
// _copy_from again: endless recursion. _copy_from applies the bits itself instead.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
}

} // namespace
} // namespace torch_dml::aten
