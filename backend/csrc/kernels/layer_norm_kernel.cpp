#include "kernels/layer_norm_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

std::string forward_source(c10::ScalarType type, bool weight, bool bias) {
  return render(wgsl::layer_norm,
                {{"acc", "f32"},
                 {"load_x", typed_load(type, "x", "i")},
                 {"apply_weight", weight ? "v * " + typed_load(type, "weight", "p.weight_offset + i") : "v"},
                 {"apply_bias", bias ? "v + " + typed_load(type, "bias", "p.bias_offset + i") : "v"},
                 {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

std::string backward_source(c10::ScalarType type, bool weight) {
  return render(wgsl::layer_norm_backward,
                {{"acc", "f32"},
                 {"load_x", typed_load(type, "x", "i")},
                 {"load_g", typed_load(type, "g", "i")},
                 {"load_weight", weight ? typed_load(type, "weight", "p.weight_offset + i") : "1.0f"},
                 {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

} // namespace

std::string layer_norm_unsupported_reason(runtime::DeviceContext& context, c10::ScalarType type, uint64_t elements) {
  if (type != c10::kFloat && type != c10::kHalf && type != c10::kBFloat16)
    return std::string("no native layer_norm for ") + c10::toString(type);
  if (elements * 4 > context.limits().maxStorageBufferBindingSize) return "an operand larger than one storage binding";
  return "";
}

void layer_norm_forward(runtime::DeviceContext& context, const LayerNormForward& f) {
  if (f.rows == 0 || f.length == 0) return;
  const c10::ScalarType type = f.input.dtype;
  const uint64_t n = f.rows * f.length;
  Launch launch(context, "layer_norm", type);
  launch.require_u32(n, "elements");
  wgsl::LayerNormParams p;
  p.rows = static_cast<uint32_t>(f.rows);
  p.length = static_cast<uint32_t>(f.length);
  p.eps = f.eps;
  p.out_offset = launch.bind(f.out, n);
  p.mean_offset = launch.bind(f.mean, f.rows);
  p.rstd_offset = launch.bind(f.rstd, f.rows);
  p.x_offset = launch.bind(f.input, n);
  p.weight_offset = launch.bind(f.weight.value_or(f.input), f.weight ? f.length : 1);
  p.bias_offset = launch.bind(f.bias.value_or(f.input), f.bias ? f.length : 1);
  const std::string name = std::string("layer_norm/") + dtype_info(type)->name + (f.weight ? "/w" : "") + (f.bias ? "/b" : "");
  launch.run(name, [&] { return forward_source(type, f.weight.has_value(), f.bias.has_value()); }, p, f.rows);
}

void layer_norm_backward(runtime::DeviceContext& context, const LayerNormBackward& b) {
  if (b.rows == 0 || b.length == 0) return;
  const c10::ScalarType type = b.input.dtype;
  const uint64_t n = b.rows * b.length;
  Launch launch(context, "layer_norm_backward", type);
  launch.require_u32(n, "elements");
  wgsl::LayerNormBackwardParams p;
  p.rows = static_cast<uint32_t>(b.rows);
  p.length = static_cast<uint32_t>(b.length);
  p.grad_input_offset = launch.bind(b.grad_input, n);
  p.weighted_offset = launch.bind(b.weighted, n);
  p.g_offset = launch.bind(b.grad, n);
  p.x_offset = launch.bind(b.input, n);
  p.mean_offset = launch.bind(b.mean, b.rows);
  p.rstd_offset = launch.bind(b.rstd, b.rows);
  p.weight_offset = launch.bind(b.weight.value_or(b.input), b.weight ? b.length : 1);
  const std::string name = std::string("layer_norm_backward/") + dtype_info(type)->name + (b.weight ? "/w" : "");
  launch.run(name, [&] { return backward_source(type, b.weight.has_value()); }, p, b.rows);
}

} // namespace torch_dml::kernels
