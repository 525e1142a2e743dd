#include "kernels/nll_loss_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {

void nll_loss(runtime::DeviceContext& context, const NllLossProblem& n) {
  const c10::ScalarType type = n.input.dtype;
  Launch launch(context, n.backward ? "nll_loss_backward" : "nll_loss", type);
  launch.require_u32(n.samples * n.classes, "elements of the input");
  wgsl::NllLossParams p = {};
  p.samples = static_cast<uint32_t>(n.samples);
  p.classes = static_cast<uint32_t>(n.classes);
  p.reduction = static_cast<uint32_t>(n.reduction);
  const uint64_t out_count = n.backward ? n.samples * n.classes : (n.reduction == 0 ? n.samples : 2);
  p.out_offset = launch.bind(n.out, out_count);
  p.input_offset = launch.bind(n.input, n.samples * n.classes);
  p.target_offset = launch.bind(n.target, n.samples);
  // Operands an entry point does not read are bound in place of the absent ones, keeping the layout.
  p.weight_offset = n.weight ? launch.bind(*n.weight, n.classes) : launch.bind(n.input, 1);
  p.grad_offset = n.backward ? launch.bind(n.grad, n.reduction == 0 ? n.samples : 1) : launch.bind(n.out, 1);
  p.total_offset = n.backward ? launch.bind(n.total, 1) : launch.bind(n.out, 1);
  p.ignore_lo = static_cast<uint32_t>(static_cast<uint64_t>(n.ignore_index));
  p.ignore_hi = static_cast<uint32_t>(static_cast<uint64_t>(n.ignore_index) >> 32);
  const bool reduced = !n.backward && n.reduction != 0;
  const char* entry = n.backward ? "backward" : reduced ? "forward_reduced" : "forward_none";
  const std::string name = std::string("nll_loss/") + entry + "/" + dtype_info(type)->name + (n.weight ? "/w" : "");
  launch.run(
      name,
      [&] {
        return render(wgsl::nll_loss,
                      {{"weight_of", n.weight ? typed_load(type, "weight", "p.weight_offset + c") : "1.0f"},
                       {"load_input", typed_load(type, "input", "p.input_offset + i")},
                       {"acc", "f32"},
                       {"workgroup_size", std::to_string(kWorkgroupSize)}});
      },
      // mean / sum fold every sample in one workgroup; the others take a thread per sample.
      p, reduced ? 1 : groups_for(n.samples), entry);
}

} // namespace torch_dml::kernels
