#include "kernels/wgsl_store.h"

#include <sstream>

namespace torch_dml::kernels {

std::string param(const std::string& field, int d) {
  static const char* lanes[] = {"x", "y", "z", "w"};
  return "p." + field + "[" + std::to_string(d / 4) + "]." + lanes[d % 4];
}

std::string index_function(const std::string& name, const std::string& shape_field, const std::string& stride_field,
                           const std::string& offset, int rank) {
  std::ostringstream text;
  text << "fn " << name << "(i: u32) -> u32 {\n  var rest = i;\n  var offset = " << offset << ";\n";
  for (int d = 0; d < rank; ++d) {
    if (d + 1 < rank) {
      text << "  offset += (rest % " << param(shape_field, d) << ") * " << param(stride_field, d) << ";\n";
      text << "  rest = rest / " << param(shape_field, d) << ";\n";
    } else {
      text << "  offset += rest * " << param(stride_field, d) << ";\n";
    }
  }
  text << "  return offset;\n}\n";
  return text.str();
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

std::string store_helpers(c10::ScalarType type) {
  if (type != c10::kBFloat16) return "";
  // Round to nearest even, NaN to the canonical quiet NaN: c10::BFloat16's conversion.
  return "fn bf16_bits(v: f32) -> u32 {\n  let u = bitcast<u32>(v);\n"
         "  if ((u & 0x7FFFFFFFu) > 0x7F800000u) { return 0x7FC0u; }\n"
         "  return (u + 0x7FFFu + ((u >> 16u) & 1u)) >> 16u;\n}\n";
}

bool is_packed(size_t itemsize) {
  return itemsize < 4;
}

std::string store_body(Store store, size_t dst_size) {
  std::ostringstream wgsl;
  const uint32_t lanes = dst_size == 1 ? 4 : 2, bits = static_cast<uint32_t>(dst_size * 8);
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
           << "  let v = value(t);\n"
           << "  atomicAnd(&dst[w], ~(" << mask << " << s));\n"
           << "  atomicOr(&dst[w], (v & " << mask << ") << s);\n";
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
  return wgsl.str();
}

} // namespace torch_dml::kernels
