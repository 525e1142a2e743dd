#include "kernels/copy_kernel.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/split.h"
#include "kernels/wgsl_family.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

enum class Source { Raw, Typed, Fill };

// Raw copies move an element's bits: a lane of a u32 word (packed dtypes), a u32, or a vec2/vec4 of
// words (8- and 16-byte dtypes).
const char* raw_array_type(size_t itemsize) {
  switch (itemsize) {
    case 8: return "vec2<u32>";
    case 16: return "vec4<u32>";
    default: return "u32";
  }
}

struct KernelSpec {
  Source source;
  Store store;
  c10::ScalarType src_type;
  c10::ScalarType dst_type;
  int rank;

  // The variant packed into 64 bits, for the pipeline lookup that runs on every dispatch.
  uint64_t code() const {
    uint64_t c = static_cast<uint64_t>(source);
    c = c << 2 | static_cast<uint64_t>(store);
    c = c << 8 | static_cast<uint64_t>(src_type);
    c = c << 8 | static_cast<uint64_t>(dst_type);
    return c << 4 | static_cast<uint64_t>(rank);
  }

  std::string name() const {
    const size_t dst_bits = c10::elementSize(dst_type) * 8;
    std::string text = "copy/";
    if (source == Source::Fill) text += "fill" + std::to_string(dst_bits);
    else if (source == Source::Raw) text += "raw" + std::to_string(dst_bits);
    else text += std::string(dtype_info(src_type)->name) + ">" + dtype_info(dst_type)->name;
    text += "/r" + std::to_string(rank);
    text += store == Store::Plain ? "/plain" : store == Store::Scatter ? "/scatter" : "/word";
    return text;
  }

  std::string source_code() const {
    const size_t dst_size = c10::elementSize(dst_type);
    const bool typed = source == Source::Typed;
    std::string dst_array = typed ? typed_array_type(dst_type) : raw_array_type(dst_size);
    if (store == Store::Scatter) dst_array = "atomic<u32>";
    const char* store_type = typed ? store_value_type(dst_type) : raw_array_type(dst_size);
    const std::string main(store_part(store));
    if (source == Source::Fill) {
      return render(wgsl::fill, {{"dst_array", dst_array},
                                 {"workgroup_size", std::to_string(kWorkgroupSize)},
                                 {"rank", std::to_string(rank)},
                                 {"lanes_log2", lanes_log2(dst_size)},
                                 {"store_type", store_type},
                                 {"value", dst_size == 8 ? "p.bits" : "p.bits.x"},
                                 {"main", main}});
    }
    std::string load, stored = "v";
    if (source == Source::Raw) {
      load = is_packed(dst_size) ? packed_extract("src", "src_index(e)", dst_size, false) : "src[src_index(e)]";
    } else {
      load = typed_load(src_type, "src", "src_index(e)");
      stored = store_form(dst_type, convert_value("v", dtype_info(src_type)->value, dtype_info(dst_type)->value));
    }
    return render(wgsl::copy,
                  {{"dst_array", dst_array},
                   {"src_array", typed ? typed_array_type(src_type) : raw_array_type(c10::elementSize(src_type))},
                   {"workgroup_size", std::to_string(kWorkgroupSize)},
                   {"rank", std::to_string(rank)},
                   {"lanes_log2", lanes_log2(dst_size)},
                   {"store_type", store_type},
                   {"load", load},
                   {"store", stored},
                   {"main", main}});
  }
};

// One launch's share of a copy or fill: operand 0 the destination, operand 1 the source (absent for
// a fill).
struct Piece {
  int rank = 0;
  uint64_t numel = 0;
  uint32_t shape[kMaxRank] = {};
  const uint32_t* dst_stride = nullptr;
  const uint32_t* src_stride = nullptr;
  DeviceTensorRef dst;
  DeviceTensorRef src;
  bool has_src = false;

  template <typename F>
  void for_each_operand(F&& f) {
    f(dst, dst_stride);
    if (has_src) f(src, src_stride);
  }
};

// The Params fields copy.wgsl and fill.wgsl share; returns the threads the launch runs.
template <typename P>
uint64_t set_common(P& p, Launch& launch, const KernelSpec& spec, const Piece& piece) {
  p.numel = static_cast<uint32_t>(piece.numel);
  p.out_offset = launch.bind(piece.dst, strided_extent(piece.rank, piece.shape, piece.dst_stride));
  set_strided_shape(p, piece.rank, piece.shape);
  set_strided_operand(p, 0, piece.rank, piece.dst_stride);
  if (spec.store != Store::Word) return piece.numel;
  const WordSpan words = word_span(c10::elementSize(spec.dst_type), p.out_offset, piece.numel);
  p.first_word = static_cast<uint32_t>(words.first);
  p.words = static_cast<uint32_t>(words.count);
  return words.count;
}

void launch_piece(runtime::DeviceContext& context, const KernelSpec& spec, uint64_t fill_bits, const Piece& piece) {
  Launch launch(context, spec.source == Source::Fill ? "fill_" : "copy_", spec.dst_type);
  const auto name = [&] { return spec.name(); };
  const auto source = [&] { return spec.source_code(); };
  if (spec.source == Source::Fill) {
    wgsl::FillParams p;
    const uint64_t threads = set_common(p, launch, spec, piece);
    p.bits[0] = static_cast<uint32_t>(fill_bits);
    p.bits[1] = static_cast<uint32_t>(fill_bits >> 32);
    launch.run(PipelineKey{&wgsl::fill, spec.code()}, name, source, p, groups_for(threads));
    return;
  }
  wgsl::CopyParams p;
  const uint64_t threads = set_common(p, launch, spec, piece);
  p.in_offset = launch.bind(piece.src, strided_extent(piece.rank, piece.shape, piece.src_stride));
  set_strided_operand(p, 1, piece.rank, piece.src_stride);
  launch.run(PipelineKey{&wgsl::copy, spec.code()}, name, source, p, groups_for(threads));
}

// Rank 0 runs as rank 1 of one element.
Piece whole(const CopyGeometry& geometry, const DeviceTensorRef& dst, const DeviceTensorRef* src) {
  Piece piece;
  piece.rank = std::max(geometry.rank, 1);
  piece.numel = geometry.numel;
  std::copy(geometry.shape, geometry.shape + kMaxRank, piece.shape);
  if (geometry.rank == 0) piece.shape[0] = 1;
  piece.dst_stride = geometry.dst_stride;
  piece.src_stride = geometry.src_stride;
  piece.dst = dst;
  if (src) piece.src = *src;
  piece.has_src = src != nullptr;
  return piece;
}

Store store_for(c10::ScalarType dst_type, const Piece& piece) {
  return store_mode(c10::elementSize(dst_type), strided_dense(piece.rank, piece.shape, piece.dst_stride));
}

std::string check_common(const DeviceTensorRef& t, const CopyGeometry& g) {
  const size_t itemsize = c10::elementSize(t.dtype);
  if (itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8 && itemsize != 16)
    return "element size " + std::to_string(itemsize);
  if (g.rank > kMaxRank) return "rank " + std::to_string(g.rank) + " above " + std::to_string(kMaxRank);
  return "";
}

} // namespace

std::string copy_unsupported_reason(runtime::DeviceContext& context, const DeviceTensorRef& dst,
                                    const DeviceTensorRef* src, const CopyGeometry& geometry) {
  std::string reason = check_common(dst, geometry);
  if (reason.empty() && src) reason = check_common(*src, geometry);
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
  const Piece piece = whole(geometry, dst, &src);
  const KernelSpec spec{src.dtype == dst.dtype ? Source::Raw : Source::Typed, store_for(dst.dtype, piece), src.dtype,
                        dst.dtype, piece.rank};
  run_in_pieces(context, piece, [&](const Piece& part) { launch_piece(context, spec, 0, part); });
}

void fill(runtime::DeviceContext& context, const DeviceTensorRef& dst, uint64_t bits, const CopyGeometry& geometry) {
  const std::string reason = copy_unsupported_reason(context, dst, nullptr, geometry);
  TORCH_CHECK(reason.empty() && c10::elementSize(dst.dtype) <= 8, "torch_dml: fill_ of ", dst.dtype,
              " cannot run on ", context.describe(), ": ", reason.empty() ? "element size above 8" : reason);
  const Piece piece = whole(geometry, dst, nullptr);
  const KernelSpec spec{Source::Fill, store_for(dst.dtype, piece), dst.dtype, dst.dtype, piece.rank};
  run_in_pieces(context, piece, [&](const Piece& part) { launch_piece(context, spec, bits, part); });
}

} // namespace torch_dml::kernels
