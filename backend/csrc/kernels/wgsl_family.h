// A kernel family's WGSL as embedded at build time (generated/wgsl_sources.h, from kernels/wgsl/), and
// the one way a variant of it is made: its named template holes filled.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace torch_dml::kernels {
namespace wgsl {

struct Family {
  std::string_view name;
  std::string_view text;
  const std::string_view* holes; // `{{name}}` holes of the text, in order of first use
  size_t hole_count;
};

} // namespace wgsl

struct Hole {
  std::string_view name;
  std::string value;
};

// The family's text with every `{{name}}` replaced by its value. Throws (naming the family and the
// hole) when a hole of the text is left unfilled or a value names no hole: a variant compiled from a
// half-filled template would fail in naga with a message far from its cause.
std::string render(const wgsl::Family& family, std::span<const Hole> holes);
inline std::string render(const wgsl::Family& family, std::initializer_list<Hole> holes) {
  return render(family, std::span<const Hole>(holes.begin(), holes.size()));
}

} // namespace torch_dml::kernels
