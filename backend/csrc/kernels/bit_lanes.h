// How the bit-moving kernels (take.wgsl, put.wgsl) address a dtype: a 32-bit word holds 1 << lanes_log2
// elements of a 1-, 2- or 4-byte dtype; an 8-byte element is two words (wide). Also what their plans
// and variants share.
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

// The part of a take.wgsl or put.wgsl plan they share: moving `count` elements of `out` from `sources`
// elements of `src` by `indices` elements of `index`, bound at @binding(0..2), a thread per output word.
template <typename P>
void plan_lanes(LaunchPlan<P>& plan, const BitLanes& lanes, const DeviceTensorRef& out, const DeviceTensorRef& src,
                const DeviceTensorRef& index, uint64_t count, uint64_t sources, uint64_t indices) {
  Launch& launch = plan.launch;
  launch.require(lanes.supported, "an element size other than 1, 2, 4 or 8 bytes");
  launch.require(out.dtype == src.dtype, "out and src of different dtypes");
  launch.require(index.dtype == c10::kInt ||
                     (index.dtype == c10::kLong && launch.context().has(runtime::Feature::ShaderInt64)),
                 "indices that are not int32, or int64 without shader-int64");
  const uint64_t words = lanes.words(count);
  launch.require_u32(words, "output words");
  launch.require_u32(lanes.source_units(sources), "source elements");
  plan.params.count = static_cast<uint32_t>(count);
  plan.params.words = static_cast<uint32_t>(words);
  plan.params.out_offset = launch.bind(out, count);
  plan.params.src_offset = launch.bind(src, sources);
  plan.params.index_offset = launch.bind(index, indices);
  launch.require(lanes.word_aligned(plan.params.out_offset), "an output that does not start on a word");
}

// A variant of take.wgsl or put.wgsl: elements of `dtype` moved by indices of `index` (int32 or int64).
struct LanesVariant {
  LanesVariant(c10::ScalarType dtype, c10::ScalarType index)
      : lanes(dtype), index_type(index == c10::kLong ? "i64" : "i32") {}

  // The pipeline name's tail: it tells every variant apart.
  std::string name() const { return lanes.name() + "/" + index_type; }

  std::vector<Hole> holes() const {
    return {{"index_type", index_type},
            {"lanes_log2", std::to_string(lanes.lanes_log2)},
            {"wide", lanes.wide ? "true" : "false"},
            {"workgroup_size", std::to_string(kWorkgroupSize)}};
  }

  BitLanes lanes;
  const char* index_type;
};

} // namespace torch_dml::kernels
