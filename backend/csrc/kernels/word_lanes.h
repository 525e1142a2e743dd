// How a float dtype's elements sit in the u32 words a thread owns (lib/word_lanes.wgsl's holes): the
// optimizer and foreach kernels.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>

namespace torch_dml::kernels {

struct Lanes {
  uint32_t per_word;
  const char* name;
  const char* decode;
  const char* encode;
};

// float32, float16 or bfloat16; nothing for the others.
inline std::optional<Lanes> lanes_of(c10::ScalarType type) {
  switch (type) {
    case c10::kFloat: return Lanes{1, "f32", "bitcast<f32>(word)", "bitcast<u32>(v)"};
    case c10::kHalf:
      return Lanes{2, "f16", "unpack2x16float(word >> (16u * lane)).x",
                   "insertBits(word, pack2x16float(vec2<f32>(v, 0.0f)), 16u * lane, 16u)"};
    case c10::kBFloat16:
      return Lanes{2, "bf16", "bitcast<f32>((word >> (16u * lane)) << 16u)",
                   "insertBits(word, bf16_bits(v), 16u * lane, 16u)"};
    default: return std::nullopt;
  }
}

} // namespace torch_dml::kernels
