#include "kernels/held_row.h"

#include <algorithm>

#include "kernels/dtypes.h"

namespace torch_dml::kernels {
namespace {

// Elements a lane holds before the team grows: 16 keeps two held rows (backward) in registers on
// every vendor; a team of 256 may hold up to 32 elements in vectors, so aligned rows up to 8192 fit.
constexpr uint32_t kPreferredElements = 16;
constexpr uint32_t kMaxTeam = 256, kMinTeam = 32, kMaxRowsPerGroup = 8;

uint32_t pow2_at_least(uint64_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

} // namespace

std::string HeldShape::name() const {
  return "v" + std::to_string(vec_width) + "t" + std::to_string(team) + "h" + std::to_string(held) + "r" +
         std::to_string(rows_per_group);
}

void HeldShape::add_holes(std::vector<Hole>& holes) const {
  holes.push_back({"team", std::to_string(team)});
  holes.push_back({"held", std::to_string(held)});
  holes.push_back({"vec_width", std::to_string(vec_width)});
  holes.push_back({"held_elements", std::to_string(held * vec_width)});
  holes.push_back({"rows_per_group", std::to_string(rows_per_group)});
  holes.push_back({"workgroup_size", std::to_string(workgroup_size())});
}

std::optional<HeldShape> held_plan(const Launch& launch, c10::ScalarType type, c10::ScalarType out_type,
                                   c10::ScalarType acc, uint64_t length, std::initializer_list<HeldOperand> operands) {
  uint32_t width = type == c10::kFloat ? 4 : (type == c10::kHalf || type == c10::kBFloat16) ? 2 : 1;
  if (length % width != 0) width = 1;
  for (const HeldOperand& o : operands)
    if (o.element_offset % width != 0 || launch.binding(o.binding).offset % 16 != 0) width = 1;
  // A packed output is written a whole u32 word (two elements) per store, so no two lanes share a word.
  const bool packed = type == c10::kHalf || type == c10::kBFloat16;
  const bool storable = out_type == acc || (out_type == type && (!packed || width == 2));
  const uint64_t vectors = length / width + (length % width != 0);
  const uint32_t preferred = std::max<uint32_t>(1, kPreferredElements / width);
  const uint32_t most = width == 1 ? kPreferredElements : 2 * kPreferredElements / width;
  HeldShape s;
  s.vec_width = width;
  s.team = std::clamp<uint32_t>(pow2_at_least((vectors + preferred - 1) / preferred), kMinTeam, kMaxTeam);
  s.held = pow2_at_least((vectors + s.team - 1) / s.team);
  s.rows_per_group = std::min(kMaxRowsPerGroup, kMaxTeam / s.team);
  if (!storable || s.held > most) return std::nullopt;
  return s;
}

std::string held_word(c10::ScalarType type, uint32_t vec_width) {
  switch (type) {
    case c10::kDouble: return "f64";
    case c10::kFloat: return vec_width == 4 ? "vec4<f32>" : vec_width == 2 ? "vec2<f32>" : "f32";
    default: return "u32";
  }
}

std::string held_load(c10::ScalarType type, uint32_t vec_width, const std::string& array) {
  const std::string at = array + "[i]";
  if (vec_width == 4) return "parts4(" + at + ")";
  if (vec_width == 2) return type == c10::kHalf ? "parts2(unpack2x16float(" + at + "))" : "bf16_pair(" + at + ")";
  if (type == c10::kFloat || type == c10::kDouble) return "Vector(" + at + ")";
  return "Vector(" + typed_load(type, array, "i") + ")";
}

std::string held_store(c10::ScalarType type, uint32_t vec_width, const std::string& array) {
  const std::string at = array + "[i] = ";
  if (type == c10::kHalf) return at + "pack2x16float(vec2<f32>(v[0], v[1]));";
  if (type == c10::kBFloat16) return at + "bf16_bits(v[0]) | (bf16_bits(v[1]) << 16u);";
  if (vec_width == 4) return at + "vec4<f32>(v[0], v[1], v[2], v[3]);";
  if (vec_width == 2) return at + "vec2<f32>(v[0], v[1]);";
  return at + "v[0];";
}

} // namespace torch_dml::kernels
