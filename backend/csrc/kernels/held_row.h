// Held-row kernels (softmax_held.wgsl, layer_norm_held.wgsl): a team of lanes holds a whole row in
// registers, so the row is read once and its result written once. This picks the team and the vectors
// each lane holds for a row length, and writes the dtype-dependent loads and stores of those vectors.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "kernels/launch.h"
#include "kernels/wgsl_family.h"

namespace torch_dml::kernels {

struct HeldShape {
  uint32_t vec_width = 1;      // elements per load: 4 (float32), 2 (float16/bfloat16 words) or 1
  uint32_t team = 32;          // lanes per row, a power of two in [32, 256]
  uint32_t held = 1;           // vectors per lane, a power of two
  uint32_t rows_per_group = 1; // teams per workgroup (up to 8): short rows share a workgroup
  uint32_t workgroup_size() const { return team * rows_per_group; }
  uint64_t groups(uint64_t rows) const { return (rows + rows_per_group - 1) / rows_per_group; }
  // A name part telling compiled variants apart.
  std::string name() const;
  // The held_row.wgsl / team_reduce.wgsl holes.
  void add_holes(std::vector<Hole>& holes) const;
};

// An operand a held-row kernel loads or stores in vectors: its binding in the launch and its first
// element within that binding's window.
struct HeldOperand {
  uint32_t binding;
  uint64_t element_offset;
};

// The shape for rows of `length` elements of `type`, stored as `out_type`: `acc` (the kernel's arithmetic
// type), or `type` itself where every store writes whole u32 words (float16/bfloat16 in pairs). Vectors are as
// wide as every operand allows: float32 loads vec4 when the length and each operand's first element are
// multiples of 4; float16/bfloat16 load u32 words (pairs) when they are even; each window must start
// 16-byte aligned. nullopt when a row is longer than a team of 256 holds (4096 elements one at a time,
// 8192 in vectors) or the output cannot be stored: those keep the workgroup-per-row kernels.
std::optional<HeldShape> held_plan(const Launch& launch, c10::ScalarType type, c10::ScalarType out_type,
                                   c10::ScalarType acc, uint64_t length, std::initializer_list<HeldOperand> operands);

// The WGSL array element type an operand of `type` is bound as for vectors of `vec_width`, and the
// expression loading vector `i` of array `array` as array<acc, vec_width>.
std::string held_word(c10::ScalarType type, uint32_t vec_width);
std::string held_load(c10::ScalarType type, uint32_t vec_width, const std::string& array);

// The statement storing `v` (array<acc, vec_width>) at vector `i` of `array`.
std::string held_store(c10::ScalarType type, uint32_t vec_width, const std::string& array);

} // namespace torch_dml::kernels
