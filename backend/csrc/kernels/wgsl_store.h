// How the kernels that write one element (or one packed word) per thread store: the copy/fill family
// and the elementwise family pick one of the store parts (wgsl/parts/store_*.wgsl) for their {{main}}
// hole. Packed destinations (1- and 2-byte dtypes) are written a whole u32 word per thread when dense,
// or one lane at a time with atomics when strided. Also the dtype-dependent WGSL expressions of a
// store, shared with other families.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace torch_dml::kernels {

enum class Store { Plain, Scatter, Word };

bool is_packed(size_t itemsize);

// Plain for 4- and 8-byte destinations; for packed ones Word when dense, Scatter when not.
inline Store store_mode(size_t itemsize, bool dense) {
  return !is_packed(itemsize) ? Store::Plain : dense ? Store::Word : Store::Scatter;
}

// The store's entry point (wgsl/parts/), for a family's {{main}} hole.
std::string_view store_part(Store store);

// The part's LANES_LOG2: log2 of destination elements per u32 word (0 for unpacked dtypes).
const char* lanes_log2(size_t itemsize);

// The words a Store::Word launch writes for `numel` elements from element `element_offset` of its
// window: the first word and how many (one thread each).
struct WordSpan {
  uint64_t first = 0;
  uint64_t count = 0;
};
WordSpan word_span(size_t itemsize, uint64_t element_offset, uint64_t numel);

// The array element type a typed operand is bound as: f64 / i64 arrays, u32 words for the rest.
const char* typed_array_type(c10::ScalarType type);

// The stored form of a value (given in the dtype's computation type): bits for packed and 32-bit
// dtypes (the low lane of a u32), the value itself for f64 / i64. A bf16 store calls bf16_bits(): a
// family that may store bf16 includes wgsl/lib/bf16_bits.wgsl.
std::string store_form(c10::ScalarType type, const std::string& v);

// WGSL type of store_form() of `type`.
const char* store_value_type(c10::ScalarType type);

} // namespace torch_dml::kernels
