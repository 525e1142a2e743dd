#include "kernels/softmax_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

bool backward(SoftmaxKind kind) {
  return kind == SoftmaxKind::SoftmaxBackward || kind == SoftmaxKind::LogSoftmaxBackward;
}

// The entry point of softmax.wgsl for each kind, also the kernel's name.
const char* kind_name(SoftmaxKind kind) {
  switch (kind) {
    case SoftmaxKind::Softmax: return "softmax";
    case SoftmaxKind::LogSoftmax: return "log_softmax";
    case SoftmaxKind::SoftmaxBackward: return "softmax_backward";
    case SoftmaxKind::LogSoftmaxBackward: return "log_softmax_backward";
  }
  return "?";
}

// float64 computes in float64 (exp and log from the elementwise family's float64 helpers), the other
// dtypes in float32.
std::string source(c10::ScalarType type) {
  const bool f64 = type == c10::kDouble;
  const auto load = [&](const char* name) { return f64 ? std::string(name) + "[i]" : typed_load(type, name, "i"); };
  return render(wgsl::softmax, {{"acc", f64 ? "f64" : "f32"},
                                {"array", f64 ? "array<f64>" : "array<u32>"},
                                {"math", f64 ? math_helpers("exp_d( log_d(", Value::F64) : ""},
                                {"load_input", load("input")},
                                {"load_grad", load("grad")},
                                {"lowest", "bitcast<f32>(0xff800000u)"},
                                {"exp", f64 ? "exp_d" : "exp"},
                                {"log", f64 ? "log_d" : "log"},
                                {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

struct Plan {
  Launch launch;
  wgsl::SoftmaxParams params;
};

Plan plan(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  Plan plan{Launch(context, kind_name(s.kind), s.input.dtype), {}};
  Launch& launch = plan.launch;
  launch.require(softmax_supports(context, s.input.dtype),
                 std::string("no native softmax for ") + c10::toString(s.input.dtype) + " on this adapter");
  const uint64_t n = s.rows * s.length;
  launch.require_u32(n, "elements");
  plan.params.rows = static_cast<uint32_t>(s.rows);
  plan.params.length = static_cast<uint32_t>(s.length);
  plan.params.out_offset = launch.bind(s.out, n);     // @binding(0)
  plan.params.input_offset = launch.bind(s.input, n); // @binding(1)
  // @binding(2): the forward kinds bind the input in the gradient's place (never read), so every entry
  // point of softmax.wgsl has the same bindings.
  plan.params.grad_offset = backward(s.kind) ? launch.bind(s.grad, n) : launch.bind(s.input, 1);
  return plan;
}

} // namespace

bool softmax_supports(runtime::DeviceContext& context, c10::ScalarType type) {
  if (type == c10::kDouble) // its exp/log helpers test bits through u64
    return context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64);
  return type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16;
}

std::string softmax_unsupported_reason(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  return plan(context, s).launch.reason();
}

void softmax(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  if (s.rows == 0 || s.length == 0) return;
  Plan plan = kernels::plan(context, s);
  const std::string name = std::string("softmax/") + kind_name(s.kind) + "/" + dtype_info(s.input.dtype)->name;
  plan.launch.run(name, [&] { return source(s.input.dtype); }, plan.params, s.rows, kind_name(s.kind));
}

} // namespace torch_dml::kernels
