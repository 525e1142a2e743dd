#include "kernels/dtypes.h"

#include <cstring>

namespace torch_dml::kernels {

using runtime::Feature;

std::optional<DtypeInfo> dtype_info(c10::ScalarType type) {
  static const DtypeInfo table[] = {
      {c10::kFloat, "f32", Value::F32, false, std::nullopt},
      {c10::kHalf, "f16", Value::F32, true, std::nullopt}, // converted with (un)pack2x16float, core WGSL
      {c10::kBFloat16, "bf16", Value::F32, true, std::nullopt},
      {c10::kDouble, "f64", Value::F64, false, Feature::ShaderF64},
      {c10::kLong, "i64", Value::I64, false, Feature::ShaderInt64},
      {c10::kInt, "i32", Value::I32, false, std::nullopt},
      {c10::kShort, "i16", Value::I32, true, std::nullopt},
      {c10::kChar, "i8", Value::I32, true, std::nullopt},
      {c10::kByte, "u8", Value::I32, true, std::nullopt},
      {c10::kBool, "bool", Value::Bool, true, std::nullopt},
  };
  for (const auto& info : table)
    if (info.type == type) return info;
  return std::nullopt;
}

namespace {

// How WGSL spells each computation type, its zero and its one.
struct Spelling {
  Value value;
  const char* type;
  const char* zero;
  const char* one;
};

const Spelling& spelling(Value value) {
  static constexpr Spelling table[] = {
      {Value::Bool, "bool", "false", "true"}, {Value::I32, "i32", "0i", "1i"},
      {Value::F32, "f32", "0.0f", "1.0f"},    {Value::F64, "f64", "0.0lf", "1.0lf"},
      {Value::I64, "i64", "0li", "1li"},
  };
  static constexpr Spelling unknown{Value::Bool, "?", "?", "?"};
  for (const Spelling& s : table)
    if (s.value == value) return s;
  return unknown;
}

} // namespace

const char* wgsl_type(Value value) { return spelling(value).type; }

std::string zero_literal(Value value) { return spelling(value).zero; }

std::string one_literal(Value value) { return spelling(value).one; }

std::string convert_value(const std::string& v, Value from, Value to) {
  if (from == to) return v;
  if (from == Value::Bool) return "select(" + zero_literal(to) + ", " + one_literal(to) + ", " + v + ")";
  // Floats test their bits: NaN is true and -0.0 false, with no reliance on NaN comparisons (WGSL
  // implementations may assume NaN never occurs).
  if (to == Value::Bool && from == Value::F32) return "((bitcast<u32>(" + v + ") & 0x7fffffffu) != 0u)";
  if (to == Value::Bool && from == Value::F64) return "((bitcast<u64>(" + v + ") & 0x7fffffffffffffffl" "u) != 0lu)";
  if (to == Value::Bool) return "(" + v + " != " + zero_literal(from) + ")";
  return std::string(wgsl_type(to)) + "(" + v + ")";
}

std::string packed_extract(const std::string& array, const std::string& index, size_t itemsize, bool signed_value) {
  const std::string word = signed_value ? "bitcast<i32>(" + array + "[" : "(" + array + "[";
  const std::string position = itemsize == 1 ? "(" + index + ") >> 2u" : "(" + index + ") >> 1u";
  const std::string shift = itemsize == 1 ? "((" + index + ") & 3u) * 8u" : "((" + index + ") & 1u) * 16u";
  const std::string bits = itemsize == 1 ? "8u" : "16u";
  return "extractBits(" + word + position + "]), " + shift + ", " + bits + ")";
}

std::string typed_load(c10::ScalarType type, const std::string& array, const std::string& index) {
  switch (type) {
    case c10::kBool: return "(" + packed_extract(array, index, 1, false) + " != 0u)";
    case c10::kByte: return "i32(" + packed_extract(array, index, 1, false) + ")";
    case c10::kChar: return packed_extract(array, index, 1, true);
    case c10::kShort: return packed_extract(array, index, 2, true);
    case c10::kHalf: return "unpack2x16float(" + packed_extract(array, index, 2, false) + ").x";
    case c10::kBFloat16: return "bitcast<f32>(" + packed_extract(array, index, 2, false) + " << 16u)";
    case c10::kFloat: return "bitcast<f32>(" + array + "[" + index + "])";
    case c10::kInt: return "bitcast<i32>(" + array + "[" + index + "])";
    default: return array + "[" + index + "]";
  }
}

void encode_scalar(const c10::Scalar& s, Value value, c10::ScalarType compute, uint32_t* words) {
  switch (value) {
    case Value::F32: {
      const float f = s.to<float>();
      std::memcpy(&words[0], &f, 4);
      break;
    }
    case Value::F64: {
      // The double's own bits (a float64 kernel always has shader-int64 to reassemble them).
      const double d = s.to<double>();
      std::memcpy(&words[0], &d, 8);
      break;
    }
    case Value::I64: {
      const int64_t v = s.to<int64_t>();
      words[0] = static_cast<uint32_t>(static_cast<uint64_t>(v));
      words[1] = static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32);
      break;
    }
    case Value::I32: {
      const int64_t v = s.to<int64_t>();
      int32_t wrapped = static_cast<int32_t>(v);
      if (compute == c10::kByte) wrapped = static_cast<uint8_t>(v);
      if (compute == c10::kChar) wrapped = static_cast<int8_t>(v);
      if (compute == c10::kShort) wrapped = static_cast<int16_t>(v);
      words[0] = static_cast<uint32_t>(wrapped);
      break;
    }
    case Value::Bool: words[0] = s.to<bool>() ? 1u : 0u; break;
  }
}

std::string decode_scalar(int slot, Value value) {
  static const char* lanes[] = {"x", "y", "z", "w"};
  const std::string vec = "p.scalars[" + std::to_string(slot / 2) + "].";
  const std::string lo = vec + lanes[(slot % 2) * 2], hi = vec + lanes[(slot % 2) * 2 + 1];
  switch (value) {
    case Value::F32: return "bitcast<f32>(" + lo + ")";
    case Value::F64: return "bitcast<f64>((u64(" + hi + ") << 32u) | u64(" + lo + "))";
    // Both words as u64 first: i64(u32) is sign-extended by naga, which turned every scalar whose
    // low word has bit 31 set (2^31, 3e9) into another number.
    case Value::I64: return "bitcast<i64>((u64(" + hi + ") << 32u) | u64(" + lo + "))";
    case Value::I32: return "bitcast<i32>(" + lo + ")";
    case Value::Bool: return "(" + lo + " != 0u)";
  }
  return "?";
}

} // namespace torch_dml::kernels
