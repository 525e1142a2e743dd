#include "kernels/copy_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <limits>
#include <sstream>

#include "kernels/dtypes.h"
#include "kernels/pipeline_cache.h"
#include "runtime/stream.h"

namespace torch_dml::kernels {
namespace {

constexpr uint32_t kWorkgroup = 256;

enum class Source { Raw, Typed, Fill };
enum class Store { Plain, Scatter, Word };

struct Params {
  uint32_t head[4];  // numel, dst element offset, src element offset, words (Store::Word)
  uint32_t extra[4]; // first word (Store::Word), fill bits lo, fill bits hi, unused
  uint32_t shape[kMaxCopyRank];
  uint32_t src_stride[kMaxCopyRank];
  uint32_t dst_stride[kMaxCopyRank];
};

const char* vec_component(int d) {
  static const char* names[] = {"x", "y", "z", "w"};
  return names[d % 4];
}

std::string param(const char* field, int d) {
  std::ostringstream text;
  text << "p." << field << "[" << d / 4 << "]." << vec_component(d);
  return text.str();
}

// Element index of linear position `i` through one operand's strides (dimension 0 fastest).
std::string index_function(const char* name, const char* stride_field, const char* offset, int rank) {
  std::ostringstream text;
  text << "fn " << name << "(i: u32) -> u32 {\n  var rest = i;\n  var offset = " << offset << ";\n";
  for (int d = 0; d < rank; ++d) {
    if (d + 1 < rank) {
      text << "  offset += (rest % " << param("shape", d) << ") * " << param(stride_field, d) << ";\n";
      text << "  rest = rest / " << param("shape", d) << ";\n";
    } else {
      text << "  offset += rest * " << param(stride_field, d) << ";\n";
    }
  }
  text << "  return offset;\n}\n";
  return text.str();
}

const char* raw_array_type(size_t itemsize) {
  switch (itemsize) {
    case 8: return "vec2<u32>";
    case 16: return "vec4<u32>";
    default: return "u32";
  }
}

bool is_packed(size_t itemsize) {
  return itemsize < 4;
}

std::string packed_extract(const std::string& i, size_t itemsize, bool signed_value) {
  const std::string word = signed_value ? "bitcast<i32>(src[" : "(src[";
  const std::string index = itemsize == 1 ? "(" + i + ") >> 2u" : "(" + i + ") >> 1u";
  const std::string shift = itemsize == 1 ? "((" + i + ") & 3u) * 8u" : "((" + i + ") & 1u) * 16u";
  const std::string bits = itemsize == 1 ? "8u" : "16u";
  return "extractBits(" + word + index + "]), " + shift + ", " + bits + ")";
}

// The value of source element `i` in its computation type.
std::string typed_load(c10::ScalarType type, const std::string& i) {
  switch (type) {
    case c10::kBool: return "(" + packed_extract(i, 1, false) + " != 0u)";
    case c10::kByte: return "i32(" + packed_extract(i, 1, false) + ")";
    case c10::kChar: return packed_extract(i, 1, true);
    case c10::kShort: return packed_extract(i, 2, true);
    case c10::kHalf: return "unpack2x16float(" + packed_extract(i, 2, false) + ").x";
    case c10::kBFloat16: return "bitcast<f32>(" + packed_extract(i, 2, false) + " << 16u)";
    case c10::kFloat: return "bitcast<f32>(src[" + i + "])";
    case c10::kInt: return "bitcast<i32>(src[" + i + "])";
    default: return "src[" + i + "]"; // f64 / i64 bound with their own WGSL types
  }
}

std::string convert(const std::string& v, Value from, Value to) {
  if (from == to) return v;
  if (from == Value::Bool) return "select(" + zero_literal(to) + ", " + one_literal(to) + ", " + v + ")";
  if (to == Value::Bool) return "(" + v + " != " + zero_literal(from) + ")";
  return std::string(wgsl_type(to)) + "(" + v + ")";
}

// The stored form of a destination value: bits for packed / 32-bit dtypes, the value for f64 / i64.
std::string store_form(c10::ScalarType type, const std::string& v) {
  switch (type) {
    case c10::kBool: return "select(0u, 1u, " + v + ")";
    case c10::kByte:
    case c10::kChar: return "(bitcast<u32>(" + v + ") & 0xFFu)";
    case c10::kShort: return "(bitcast<u32>(" + v + ") & 0xFFFFu)";
    case c10::kHalf: return "(pack2x16float(vec2<f32>(" + v + ", 0.0f)) & 0xFFFFu)";
    case c10::kBFloat16: return "bf16_bits(" + v + ")";
    case c10::kFloat:
    case c10::kInt: return "bitcast<u32>(" + v + ")";
    default: return v;
  }
}

const char* typed_array_type(c10::ScalarType type) {
  switch (type) {
    case c10::kDouble: return "f64";
    case c10::kLong: return "i64";
    default: return "u32";
  }
}

struct KernelSpec {
  Source source;
  Store store;
  c10::ScalarType src_type;
  c10::ScalarType dst_type;
  int rank;

  std::string name() const {
    std::ostringstream text;
    const size_t src_size = c10::elementSize(src_type), dst_size = c10::elementSize(dst_type);
    text << "copy/";
    if (source == Source::Fill) text << "fill" << dst_size * 8;
    else if (source == Source::Raw) text << "raw" << dst_size * 8;
    else text << dtype_info(src_type)->name << ">" << dtype_info(dst_type)->name;
    (void)src_size;
    text << "/r" << rank << "/" << (store == Store::Plain ? "plain" : store == Store::Scatter ? "scatter" : "word");
    return text.str();
  }

  std::string source_code() const {
    const size_t dst_size = c10::elementSize(dst_type);
    const bool typed = source == Source::Typed;
    std::ostringstream wgsl;
    wgsl << "// generated by torch_dml kernels/copy_kernel.cpp: " << name() << "\n";
    wgsl << "struct Params {\n  head: vec4<u32>,\n  extra: vec4<u32>,\n  shape: array<vec4<u32>, 2>,\n"
            "  src_stride: array<vec4<u32>, 2>,\n  dst_stride: array<vec4<u32>, 2>,\n}\n";
    std::string dst_type_name = typed ? typed_array_type(dst_type) : raw_array_type(dst_size);
    if (store == Store::Scatter) dst_type_name = "atomic<u32>";
    // Every storage binding is read_write: one buffer may be bound twice (in-place copies), and a
    // read-only plus read-write binding of one buffer in one dispatch is a validation error.
    wgsl << "@group(0) @binding(0) var<storage, read_write> dst: array<" << dst_type_name << ">;\n";
    if (source == Source::Fill) {
      wgsl << "@group(0) @binding(1) var<uniform> p: Params;\n";
    } else {
      const char* src_type_name = typed ? typed_array_type(src_type) : raw_array_type(c10::elementSize(src_type));
      wgsl << "@group(0) @binding(1) var<storage, read_write> src: array<" << src_type_name << ">;\n";
      wgsl << "@group(0) @binding(2) var<uniform> p: Params;\n";
    }
    if (typed && dst_type == c10::kBFloat16) {
      // Round to nearest even, NaN to the canonical quiet NaN: c10::BFloat16's conversion.
      wgsl << "fn bf16_bits(v: f32) -> u32 {\n  let u = bitcast<u32>(v);\n"
              "  if ((u & 0x7FFFFFFFu) > 0x7F800000u) { return 0x7FC0u; }\n"
              "  return (u + 0x7FFFu + ((u >> 16u) & 1u)) >> 16u;\n}\n";
    }
    if (source != Source::Fill) wgsl << index_function("src_index", "src_stride", "p.head.z", rank);
    if (store != Store::Word) wgsl << index_function("dst_index", "dst_stride", "p.head.y", rank);

    std::string value_type = typed ? (is_packed(dst_size) ? "u32" : typed_array_type(dst_type)) : raw_array_type(dst_size);
    if (typed && (dst_type == c10::kFloat || dst_type == c10::kInt)) value_type = "u32";
    wgsl << "fn value(e: u32) -> " << value_type << " {\n";
    if (source == Source::Fill) {
      wgsl << "  return " << (dst_size == 8 ? "vec2<u32>(p.extra.y, p.extra.z)" : "p.extra.y") << ";\n";
    } else if (source == Source::Raw) {
      const std::string i = "src_index(e)";
      wgsl << "  return " << (is_packed(dst_size) ? packed_extract(i, dst_size, false) : "src[" + i + "]") << ";\n";
    } else {
      const Value from = dtype_info(src_type)->value, to = dtype_info(dst_type)->value;
      wgsl << "  let v = " << typed_load(src_type, "src_index(e)") << ";\n";
      wgsl << "  return " << store_form(dst_type, convert("v", from, to)) << ";\n";
    }
    wgsl << "}\n";

    wgsl << "@compute @workgroup_size(" << kWorkgroup << ")\n"
         << "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {\n"
         << "  let t = gid.x + gid.y * groups.x * " << kWorkgroup << "u;\n";
    const uint32_t lanes = dst_size == 1 ? 4 : 2, bits = dst_size * 8;
    const char* mask = dst_size == 1 ? "0xFFu" : "0xFFFFu";
    switch (store) {
      case Store::Plain:
        wgsl << "  if (t >= p.head.x) { return; }\n  dst[dst_index(t)] = value(t);\n";
        break;
      case Store::Scatter:
        // Neighbouring elements of a strided packed tensor share words with other threads (and with
        // memory outside the tensor): replace only this element's lane, atomically.
        wgsl << "  if (t >= p.head.x) { return; }\n  let d = dst_index(t);\n"
             << "  let w = d >> " << (dst_size == 1 ? "2u" : "1u") << ";\n"
             << "  let s = (d & " << (dst_size == 1 ? "3u" : "1u") << ") * " << bits << "u;\n"
             << "  atomicAnd(&dst[w], ~(" << mask << " << s));\n"
             << "  atomicOr(&dst[w], (value(t) & " << mask << ") << s);\n";
        break;
      case Store::Word:
        // A dense packed destination: each thread owns one whole word. Only the first and last words
        // can hold bytes outside the tensor; those keep their old contents.
        wgsl << "  if (t >= p.head.w) { return; }\n  let w = p.extra.x + t;\n  var word = 0u;\n"
             << "  if (t == 0u || t + 1u == p.head.w) { word = dst[w]; }\n";
        for (uint32_t j = 0; j < lanes; ++j) {
          wgsl << "  {\n    let ei = w * " << lanes << "u + " << j << "u;\n"
               << "    if (ei >= p.head.y && ei - p.head.y < p.head.x) {\n"
               << "      word = insertBits(word, value(ei - p.head.y), " << j * bits << "u, " << bits << "u);\n"
               << "    }\n  }\n";
        }
        wgsl << "  dst[w] = word;\n";
        break;
    }
    wgsl << "}\n";
    return wgsl.str();
  }
};

bool dense(const CopyGeometry& g) {
  uint64_t expected = 1;
  for (int d = 0; d < g.rank; ++d) {
    if (g.shape[d] != 1 && g.dst_stride[d] != expected) return false;
    expected *= g.shape[d];
  }
  return true;
}

// The part of a buffer one dispatch binds: bindings stop at maxStorageBufferBindingSize (128 MiB on
// lavapipe, 2 GiB on NVIDIA), so each operand is bound from just below its first element, and a
// dispatch whose operands span more than that is split (see launch_split).
struct Window {
  uint64_t offset = 0;         // bytes, a multiple of minStorageBufferOffsetAlignment
  uint64_t size = 0;           // bytes, a multiple of 4
  uint64_t element_offset = 0; // first element, relative to the window
};

Window window_for(runtime::DeviceContext& context, const DeviceTensorRef& t, const uint32_t* strides,
                  const CopyGeometry& g) {
  const uint64_t itemsize = c10::elementSize(t.dtype);
  uint64_t last = t.element_offset;
  for (int d = 0; d < g.rank; ++d) last += static_cast<uint64_t>(g.shape[d] - 1) * strides[d];
  const uint64_t alignment = context.limits().minStorageBufferOffsetAlignment;
  Window w;
  w.offset = t.element_offset * itemsize / alignment * alignment;
  const uint64_t end = std::min<uint64_t>((last + 1) * itemsize + 3, t.buffer_size) / 4 * 4;
  w.size = std::max<uint64_t>(end - w.offset, 4);
  w.element_offset = t.element_offset - w.offset / itemsize;
  return w;
}

bool fits(runtime::DeviceContext& context, const Window& w) {
  return w.size <= context.limits().maxStorageBufferBindingSize && w.element_offset <= 0xFFFFFFFFull;
}

void launch(runtime::DeviceContext& context, const KernelSpec& spec, const DeviceTensorRef& dst,
            const DeviceTensorRef* src, uint64_t fill_bits, const CopyGeometry& g) {
  if (g.numel == 0) return;
  const Window dst_window = window_for(context, dst, g.dst_stride, g);
  const Window src_window = src ? window_for(context, *src, g.src_stride, g) : Window{};
  Params params = {};
  params.head[0] = static_cast<uint32_t>(g.numel);
  params.head[1] = static_cast<uint32_t>(dst_window.element_offset);
  params.head[2] = static_cast<uint32_t>(src_window.element_offset);
  params.extra[1] = static_cast<uint32_t>(fill_bits);
  params.extra[2] = static_cast<uint32_t>(fill_bits >> 32);
  for (int d = 0; d < g.rank; ++d) {
    params.shape[d] = g.shape[d];
    params.src_stride[d] = g.src_stride[d];
    params.dst_stride[d] = g.dst_stride[d];
  }
  uint64_t threads = g.numel;
  if (spec.store == Store::Word) {
    const uint64_t lanes = c10::elementSize(spec.dst_type) == 1 ? 4 : 2;
    const uint64_t first = dst_window.element_offset / lanes;
    const uint64_t end = (dst_window.element_offset + g.numel + lanes - 1) / lanes;
    params.extra[0] = static_cast<uint32_t>(first);
    params.head[3] = static_cast<uint32_t>(end - first);
    threads = end - first;
  }
  const uint64_t groups = (threads + kWorkgroup - 1) / kWorkgroup;
  const uint32_t max_x = context.limits().maxComputeWorkgroupsPerDimension;
  const uint32_t groups_x = static_cast<uint32_t>(std::min<uint64_t>(groups, max_x));
  const uint32_t groups_y = static_cast<uint32_t>((groups + groups_x - 1) / groups_x);

  const uint32_t storage_count = src ? 2 : 1;
  WGPUComputePipeline compiled = pipeline(context, spec.name(), storage_count, [&] { return spec.source_code(); });
  runtime::StorageBinding bindings[2];
  bindings[0] = {dst.buffer, dst_window.offset, dst_window.size};
  if (src) bindings[1] = {src->buffer, src_window.offset, src_window.size};
  context.stream().dispatch(compiled, storage_count, bindings, &params, sizeof(params), groups_x, groups_y);
}

// Splits the slowest-varying dimension in halves until every operand's window fits one binding.
// Pieces run as successive dispatches, so a packed word shared by two pieces is still written safely
// (each piece keeps the lanes it does not own).
void launch_split(runtime::DeviceContext& context, const KernelSpec& spec, const DeviceTensorRef& dst,
                  const DeviceTensorRef* src, uint64_t fill_bits, const CopyGeometry& g) {
  if (g.numel == 0) return;
  const bool dst_fits = fits(context, window_for(context, dst, g.dst_stride, g));
  const bool src_fits = !src || fits(context, window_for(context, *src, g.src_stride, g));
  const bool small = g.numel <= 0xFFFFFFFFull;
  int d = g.rank - 1;
  while (d >= 0 && g.shape[d] <= 1) --d;
  if ((dst_fits && src_fits && small) || d < 0) {
    launch(context, spec, dst, src, fill_bits, g);
    return;
  }
  const uint32_t head = g.shape[d] / 2;
  CopyGeometry first = g, second = g;
  first.shape[d] = head;
  second.shape[d] = g.shape[d] - head;
  first.numel = g.numel / g.shape[d] * head;
  second.numel = g.numel - first.numel;
  DeviceTensorRef dst_second = dst;
  dst_second.element_offset += static_cast<uint64_t>(head) * g.dst_stride[d];
  launch_split(context, spec, dst, src, fill_bits, first);
  if (src) {
    DeviceTensorRef src_second = *src;
    src_second.element_offset += static_cast<uint64_t>(head) * g.src_stride[d];
    launch_split(context, spec, dst_second, &src_second, fill_bits, second);
  } else {
    launch_split(context, spec, dst_second, nullptr, fill_bits, second);
  }
}

Store store_mode(c10::ScalarType dst_type, const CopyGeometry& g) {
  if (!is_packed(c10::elementSize(dst_type))) return Store::Plain;
  return dense(g) ? Store::Word : Store::Scatter;
}

std::string check_common(runtime::DeviceContext& context, const DeviceTensorRef& t, const CopyGeometry& g) {
  const size_t itemsize = c10::elementSize(t.dtype);
  if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8 && itemsize != 16)
    return "element size " + std::to_string(itemsize);
  if (g.rank > kMaxCopyRank) return "rank " + std::to_string(g.rank) + " above " + std::to_string(kMaxCopyRank);
  return "";
}

} // namespace

std::string copy_unsupported_reason(runtime::DeviceContext& context, const DeviceTensorRef& dst,
                                    const DeviceTensorRef* src, const CopyGeometry& geometry) {
  std::string reason = check_common(context, dst, geometry);
  if (reason.empty() && src) reason = check_common(context, *src, geometry);
  if (!reason.empty() || !src || src->dtype == dst.dtype) return reason;
  for (c10::ScalarType type : {src->dtype, dst.dtype}) {
    const auto info = dtype_info(type);
    if (!info) return std::string("no WGSL conversion for ") + c10::toString(type);
    if (info->needs && !context.has(*info->needs))
      return std::string(c10::toString(type)) + " needs " + std::string(runtime::feature_name(*info->needs));
  }
  return "";
}

void copy(runtime::DeviceContext& context, const DeviceTensorRef& dst, const DeviceTensorRef& src,
          const CopyGeometry& geometry) {
  const std::string reason = copy_unsupported_reason(context, dst, &src, geometry);
  TORCH_CHECK(reason.empty(), "torch_dml: copy from ", src.dtype, " to ", dst.dtype, " cannot run on ",
              context.describe(), ": ", reason);
  const KernelSpec spec{src.dtype == dst.dtype ? Source::Raw : Source::Typed, store_mode(dst.dtype, geometry),
                        src.dtype, dst.dtype, std::max(geometry.rank, 1)};
  CopyGeometry g = geometry;
  if (g.rank == 0) {
    g.rank = 1;
    g.shape[0] = 1;
  }
  launch_split(context, spec, dst, &src, 0, g);
}

void fill(runtime::DeviceContext& context, const DeviceTensorRef& dst, uint64_t bits, const CopyGeometry& geometry) {
  const std::string reason = copy_unsupported_reason(context, dst, nullptr, geometry);
  TORCH_CHECK(reason.empty() && c10::elementSize(dst.dtype) <= 8, "torch_dml: fill_ of ", dst.dtype,
              " cannot run on ", context.describe(), ": ", reason.empty() ? "element size above 8" : reason);
  CopyGeometry g = geometry;
  if (g.rank == 0) {
    g.rank = 1;
    g.shape[0] = 1;
  }
  const KernelSpec spec{Source::Fill, store_mode(dst.dtype, g), dst.dtype, dst.dtype, g.rank};
  launch_split(context, spec, dst, nullptr, bits, g);
}

} // namespace torch_dml::kernels
