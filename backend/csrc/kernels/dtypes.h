// How each torch dtype lives in WebGPU storage and computes in WGSL. WGSL has no 8- or 16-bit storage
// types, so bool/uint8/int8 are packed four to a u32 word and int16/float16/bfloat16 two to a word.
#pragma once

#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

#include "runtime/features.h"

namespace torch_dml::kernels {

// The WGSL type a value is computed in.
enum class Value { Bool, I32, F32, F64, I64 };

struct DtypeInfo {
  c10::ScalarType type;
  const char* name;    // short name used in kernel names: "f32", "bf16", ...
  Value value;         // computation type
  bool packed;         // sub-word: several elements per u32
  // Features a kernel needs to compute on this dtype (not to move its bits).
  std::optional<runtime::Feature> needs;
};

// The dtypes kernels can compute on; nullopt for the rest (complex, uint16+, float8, quantized).
std::optional<DtypeInfo> dtype_info(c10::ScalarType type);

// float32, float16 or bfloat16: the floats every adapter computes on (in float32, the 16-bit ones
// widened on load), which the float-only kernels take; float64 needs features some adapters lack.
inline bool is_float_family(c10::ScalarType type) {
  return type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16;
}

const char* wgsl_type(Value value);
std::string zero_literal(Value value);
std::string one_literal(Value value);

// WGSL expression converting `v` between computation types with PyTorch's rules (bool is 0/1, and a
// value is true when nonzero).
std::string convert_value(const std::string& v, Value from, Value to);

// WGSL expression for lane `index` of a packed (1- or 2-byte) element in `array` (array<u32>).
std::string packed_extract(const std::string& array, const std::string& index, size_t itemsize, bool signed_value);

// WGSL expression for element `index` of `array` as its computation type (dtype_info(type)->value).
// Packed and 32-bit dtypes are bound as array<u32>; f64 and i64 as array<f64> / array<i64>.
std::string typed_load(c10::ScalarType type, const std::string& array, const std::string& index);

// Scalars travel to kernels in 64-bit slots of the uniform block, as a field
// `scalars: array<vec4<u32>, N>` (slot i: words 2i, the low one, and 2i + 1). encode_scalar writes
// `s` for decoding as `value`; narrow integer computations first wrap it to `compute`, as a CPU
// kernel's static_cast would (-3 is 253 in a uint8 clamp). decode_scalar is the WGSL expression
// reading slot `slot` back.
void encode_scalar(const c10::Scalar& s, Value value, c10::ScalarType compute, uint32_t* words);
std::string decode_scalar(int slot, Value value);

} // namespace torch_dml::kernels
