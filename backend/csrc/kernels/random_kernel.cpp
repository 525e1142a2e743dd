#include "kernels/random_kernel.h"

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

} // namespace

void random_fill(runtime::DeviceContext& context, const RandomProblem& r) {
  if (r.numel == 0) return;
  const bool dropout = r.kind == RandomKind::Dropout;
  Launch launch(context, dropout ? "dropout" : "random", dropout ? r.input.dtype : r.out.dtype);
  launch.require_u32(r.numel, "elements");
  wgsl::RandomParams p = {};
  p.count = static_cast<uint32_t>(r.numel);
  p.out_offset = launch.bind(r.out, r.numel);
  // The distributions without a mask and an input bind out in their places.
  p.mask_offset = launch.bind(dropout ? r.mask : r.out, r.numel);
  p.input_offset = launch.bind(dropout ? r.input : r.out, r.numel);
  p.key[0] = static_cast<uint32_t>(r.seed);
  p.key[1] = static_cast<uint32_t>(r.seed >> 32);
  p.key[2] = static_cast<uint32_t>(r.offset);
  p.key[3] = static_cast<uint32_t>(r.offset >> 32);
  p.scalars[0] = r.a;
  p.scalars[1] = r.b;
  const c10::ScalarType input_type = dropout ? r.input.dtype : c10::kFloat;
  const char* entry = entry_point(r.kind);
  const std::string name = std::string("random/") + entry + "/" + dtype_info(input_type)->name;
  launch.run(
      name,
      [&] {
        return render(wgsl::random, {{"load_input", typed_load(input_type, "input", "i")},
                                     {"workgroup_size", std::to_string(kWorkgroupSize)}});
      },
      p, groups_for((r.numel + 3) / 4), entry);
}

} // namespace torch_dml::kernels
