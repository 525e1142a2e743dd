#include "kernels/random_kernel.h"

#include <algorithm>

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

const char* entry_point(RandomKind kind) {
  switch (kind) {
    case RandomKind::Uniform: return "fill_uniform";
    case RandomKind::Normal: return "fill_normal";
    case RandomKind::Bernoulli: return "fill_bernoulli";
    case RandomKind::Dropout: return "dropout";
  }
  return "?";
}

DeviceTensorRef from(DeviceTensorRef t, uint64_t first) {
  t.element_offset += first;
  return t;
}

} // namespace

void random_fill(runtime::DeviceContext& context, const RandomProblem& r) {
  const bool dropout = r.kind == RandomKind::Dropout;
  const c10::ScalarType input_type = dropout ? r.input.dtype : c10::kFloat;
  const char* entry = entry_point(r.kind);
  const std::string name = std::string("random/") + entry + "/" + dtype_info(input_type)->name;
  // A call larger than one storage binding runs as pieces of whole threads (4 elements each); piece k
  // starts its threads at the call's thread first / 4, so the values are those of one launch. The
  // slack leaves room for the window's offset alignment; every operand is at most 4 bytes an element.
  const uint64_t binding = context.limits().maxStorageBufferBindingSize;
  const uint64_t piece = std::max<uint64_t>(4096, ((binding - 4096) / 4) & ~uint64_t{4095});
  for (uint64_t first = 0; first < r.numel; first += piece) {
    const uint64_t n = std::min(piece, r.numel - first);
    Launch launch(context, dropout ? "dropout" : "random", dropout ? r.input.dtype : r.out.dtype);
    launch.require_u32(first / 4, "threads");
    wgsl::RandomParams p = {};
    p.count = static_cast<uint32_t>(n);
    p.first_thread = static_cast<uint32_t>(first / 4);
    p.out_offset = launch.bind(from(r.out, first), n);
    // The distributions without a mask and an input bind out in their places.
    p.mask_offset = launch.bind(dropout ? from(r.mask, first) : from(r.out, first), n);
    p.input_offset = launch.bind(dropout ? from(r.input, first) : from(r.out, first), n);
    p.key[0] = static_cast<uint32_t>(r.seed);
    p.key[1] = static_cast<uint32_t>(r.seed >> 32);
    p.key[2] = static_cast<uint32_t>(r.offset);
    p.key[3] = static_cast<uint32_t>(r.offset >> 32);
    p.scalars[0] = r.a;
    p.scalars[1] = r.b;
    launch.run(
        name,
        [&] {
          return render(wgsl::random, {{"load_input", typed_load(input_type, "input", "i")},
                                       {"workgroup_size", std::to_string(kWorkgroupSize)}});
        },
        p, groups_for((n + 3) / 4), entry);
  }
}

} // namespace torch_dml::kernels
