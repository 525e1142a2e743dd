// How the bit-moving kernels (take.wgsl, put.wgsl) address a dtype: a 32-bit word holds 1 << lanes_log2
// elements of a 1-, 2- or 4-byte dtype; an 8-byte element is two words (wide).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/launch.h"
#include "kernels/wgsl_family.h"

namespace torch_dml::kernels {

struct BitLanes {
  uint32_t lanes_log2 = 0;
  bool wide = false;
  bool supported = true; // an element size of 1, 2, 4 or 8 bytes

  explicit BitLanes(c10::ScalarType dtype) {
    const size_t itemsize = c10::elementSize(dtype);
    wide = itemsize == 8;
    lanes_log2 = itemsize == 1 ? 2 : itemsize == 2 ? 1 : 0;
    supported = itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
  }

  // Output words a thread each for `count` elements.
  uint64_t words(uint64_t count) const {
    return wide ? 2 * count : (count + (uint64_t{1} << lanes_log2) - 1) >> lanes_log2;
  }
  // Words the source of `count` elements spans, as u32 indices must reach.
  uint64_t source_units(uint64_t count) const { return wide ? 2 * count : count; }
  bool word_aligned(uint32_t element_offset) const { return (element_offset & ((1u << lanes_log2) - 1)) == 0; }
  std::string name() const { return wide ? "b64" : lanes_log2 == 2 ? "b8" : lanes_log2 == 1 ? "b16" : "b32"; }
};

// The template holes take.wgsl and put.wgsl share, for indices of `index_type` (i32 or i64).
inline std::vector<Hole> lanes_holes(const BitLanes& lanes, const char* index_type) {
  return {{"index_type", index_type},
          {"lanes_log2", std::to_string(lanes.lanes_log2)},
          {"wide", lanes.wide ? "true" : "false"},
          {"workgroup_size", std::to_string(kWorkgroupSize)}};
}

} // namespace torch_dml::kernels
