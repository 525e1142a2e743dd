// WGSL pieces shared by the kernels that write one element (or one packed word) per thread: the
// copy/fill family and the elementwise family. Packed destinations (1- and 2-byte dtypes) are written
// a whole u32 word per thread when dense, or one lane at a time with atomics when strided.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

namespace torch_dml::kernels {

enum class Store { Plain, Scatter, Word };

// "p.<field>[d / 4].<xyzw>": one entry of a uniform array<vec4<u32>, N> parameter.
std::string param(const std::string& field, int d);

// WGSL function `name(i: u32) -> u32`: the element index of linear position `i` through the strides
// in `stride_field` over the shape in `shape_field` (dimension 0 fastest), plus `offset`.
std::string index_function(const std::string& name, const std::string& shape_field, const std::string& stride_field,
                           const std::string& offset, int rank);

// The array element type a typed operand is bound as: f64 / i64 arrays, u32 words for the rest.
const char* typed_array_type(c10::ScalarType type);

// The stored form of a value (given in the dtype's computation type): bits for packed and 32-bit
// dtypes (the low lane of a u32), the value itself for f64 / i64.
std::string store_form(c10::ScalarType type, const std::string& v);

// WGSL type returned by a `value(e)` function that yields store_form() of `type`.
const char* store_value_type(c10::ScalarType type);

// Helper functions store_form() may call (bf16 rounding), for a kernel storing `type`.
std::string store_helpers(c10::ScalarType type);

// The body of `main` for the given store mode: thread index `t`, destination `dst`, element count
// p.head.x, destination offset p.head.y; for Store::Word the word count p.head.w and first word
// p.extra.x. Calls `dst_index(e)` and `value(e)`.
std::string store_body(Store store, size_t dst_itemsize);

bool is_packed(size_t itemsize);

} // namespace torch_dml::kernels
