#include "kernels/wgsl_family.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace torch_dml::kernels {

std::string render(const wgsl::Family& family, std::span<const Hole> holes) {
  const std::string_view* family_holes_end = family.holes + family.hole_count;
  for (const Hole& hole : holes)
    TORCH_CHECK(std::find(family.holes, family_holes_end, hole.name) != family_holes_end, "torch_dml: ",
                family.name, ".wgsl has no template hole {{", hole.name, "}}");
  std::string out;
  out.reserve(family.text.size() + 1024);
  const std::string_view text = family.text;
  size_t at = 0;
  while (true) {
    const size_t open = text.find("{{", at);
    if (open == std::string_view::npos) break;
    const size_t close = text.find("}}", open + 2);
    TORCH_CHECK(close != std::string_view::npos, "torch_dml: unclosed template hole in ", family.name, ".wgsl");
    const std::string_view name = text.substr(open + 2, close - open - 2);
    const Hole* value = nullptr;
    for (const Hole& hole : holes)
      if (hole.name == name) value = &hole;
    TORCH_CHECK(value != nullptr, "torch_dml: ", family.name, ".wgsl: template hole {{", name, "}} left unfilled");
    out.append(text.substr(at, open - at));
    out.append(value->value);
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

} // namespace torch_dml::kernels
