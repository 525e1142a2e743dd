#include "kernels/wgsl_store.h"

#include "kernels/generated/wgsl_sources.h"

namespace torch_dml::kernels {

bool is_packed(size_t itemsize) {
  return itemsize < 4;
}

std::string_view store_part(Store store) {
  switch (store) {
    case Store::Scatter: return wgsl::part_store_scatter;
    case Store::Word: return wgsl::part_store_word;
    default: return wgsl::part_store_plain;
  }
}

const char* lanes_log2(size_t itemsize) {
  return itemsize == 1 ? "2" : itemsize == 2 ? "1" : "0";
}

WordSpan word_span(size_t itemsize, uint64_t element_offset, uint64_t numel) {
  const uint64_t lanes = itemsize == 1 ? 4 : 2;
  const uint64_t first = element_offset / lanes;
  const uint64_t end = (element_offset + numel + lanes - 1) / lanes;
  return {first, end - first};
}

const char* typed_array_type(c10::ScalarType type) {
  switch (type) {
    case c10::kDouble: return "f64";
    case c10::kLong: return "i64";
    default: return "u32";
  }
}

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

const char* store_value_type(c10::ScalarType type) {
  return typed_array_type(type);
}

} // namespace torch_dml::kernels
