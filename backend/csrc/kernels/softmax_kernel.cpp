#include "kernels/softmax_kernel.h"

#include <optional>
#include <vector>

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/held_row.h"
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

// softmax.wgsl or softmax_strided.wgsl (which also takes the bit tests of the elementwise family's
// helpers) for `type`. float64 computes in float64 (exp and log from the elementwise family's float64
// helpers), the other dtypes in float32.
std::string source(const wgsl::Family& family, c10::ScalarType type) {
  const bool strided = &family == &wgsl::softmax_strided;
  const bool f64 = type == c10::kDouble;
  const auto load = [&](const char* name) { return f64 ? std::string(name) + "[i]" : typed_load(type, name, "i"); };
  std::vector<Hole> holes = {{"acc", f64 ? "f64" : "f32"},
                             {"array", f64 ? "array<f64>" : "array<u32>"},
                             {"math", math_helpers(std::string(f64 ? "exp_d( log_d( " : "") +
                                                       (strided ? "isnan_( isinf_( signbit_( nan_(" : ""),
                                                   f64 ? Value::F64 : Value::F32)},
                             {"load_input", load("input")},
                             {"load_grad", load("grad")},
                             {"exp", f64 ? "exp_d" : "exp"},
                             {"log", f64 ? "log_d" : "log"},
                             {"workgroup_size", std::to_string(kWorkgroupSize)}};
  if (!strided) holes.push_back({"lowest", "bitcast<f32>(0xff800000u)"});
  return render(family, holes);
}

std::string held_source(c10::ScalarType type, c10::ScalarType out_type, const HeldShape& shape) {
  const bool f64 = type == c10::kDouble;
  std::vector<Hole> holes = {{"acc", f64 ? "f64" : "f32"},
                             {"out_word", held_word(out_type, shape.vec_width)},
                             {"in_word", held_word(type, shape.vec_width)},
                             {"math", f64 ? math_helpers("exp_d( log_d(", Value::F64) : ""},
                             {"load_input", held_load(type, shape.vec_width, "input")},
                             {"load_grad", held_load(type, shape.vec_width, "grad")},
                             {"store", held_store(out_type, shape.vec_width, "out")},
                             {"lowest", "bitcast<f32>(0xff800000u)"},
                             {"exp", f64 ? "exp_d" : "exp"},
                             {"log", f64 ? "log_d" : "log"}};
  shape.add_holes(holes);
  return render(wgsl::softmax_held, holes);
}

// The operands' first elements within their bindings' windows, in units of `width` elements.
template <typename P>
void set_offsets(P& params, uint32_t out, uint32_t input, uint32_t grad, uint32_t width = 1) {
  params.out_offset = out / width;
  params.input_offset = input / width;
  params.grad_offset = grad / width;
}

// The kernel's arithmetic type, which the workgroup-per-row kernels write whatever the output's dtype.
c10::ScalarType acc_type(c10::ScalarType type) {
  return type == c10::kDouble ? c10::kDouble : c10::kFloat;
}

struct Plan {
  Launch launch;
  std::optional<HeldShape> held; // rows a team holds whole; else a workgroup per row
  wgsl::SoftmaxParams params;
  wgsl::SoftmaxHeldParams held_params;
  wgsl::SoftmaxStridedParams strided_params; // inner > 1
};

Plan plan(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  Plan plan{Launch(context, kind_name(s.kind), s.input.dtype), std::nullopt, {}, {}, {}};
  Launch& launch = plan.launch;
  launch.require(softmax_supports(context, s.input.dtype),
                 std::string("no native softmax for ") + c10::toString(s.input.dtype) + " on this adapter");
  const uint64_t n = s.rows * s.length * s.inner;
  launch.require_u32(n, "elements");
  const uint32_t out_offset = launch.bind(s.out, n);     // @binding(0)
  const uint32_t input_offset = launch.bind(s.input, n); // @binding(1)
  // @binding(2): the forward kinds bind the input in the gradient's place (never read), so every entry
  // point has the same bindings; whole, since a binding must hold one of the shader's vectors.
  const uint32_t grad_offset = launch.bind(backward(s.kind) ? s.grad : s.input, n);
  const c10::ScalarType type = s.input.dtype;
  if (s.inner > 1) {
    launch.require(s.out.dtype == acc_type(type), std::string("no ") + c10::toString(s.out.dtype) + " output for columns");
    launch.require_u32(s.rows * s.inner, "columns");
    plan.strided_params.columns = static_cast<uint32_t>(s.rows * s.inner);
    plan.strided_params.length = static_cast<uint32_t>(s.length);
    plan.strided_params.inner = static_cast<uint32_t>(s.inner);
    set_offsets(plan.strided_params, out_offset, input_offset, grad_offset);
    return plan;
  }
  plan.held = held_plan(launch, type, s.out.dtype, acc_type(type), s.length,
                        {{0, out_offset}, {1, input_offset}, {2, grad_offset}});
  if (plan.held) {
    const uint32_t width = plan.held->vec_width;
    plan.held_params.rows = static_cast<uint32_t>(s.rows);
    plan.held_params.width = static_cast<uint32_t>(s.length / width);
    set_offsets(plan.held_params, out_offset, input_offset, grad_offset, width);
    return plan;
  }
  launch.require(s.out.dtype == acc_type(type), std::string("no ") + c10::toString(s.out.dtype) + " output for these rows");
  plan.params.rows = static_cast<uint32_t>(s.rows);
  plan.params.length = static_cast<uint32_t>(s.length);
  set_offsets(plan.params, out_offset, input_offset, grad_offset);
  return plan;
}

} // namespace

bool softmax_supports(runtime::DeviceContext& context, c10::ScalarType type) {
  if (type == c10::kDouble) // its exp/log helpers test bits through u64
    return context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64);
  return is_float_family(type);
}

bool softmax_stores(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  return plan(context, s).launch.ok();
}

std::string softmax_unsupported_reason(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  return plan(context, s).launch.reason();
}

void softmax(runtime::DeviceContext& context, const SoftmaxProblem& s) {
  if (s.rows == 0 || s.length == 0 || s.inner == 0) return;
  Plan plan = kernels::plan(context, s);
  const char* dtype = dtype_info(s.input.dtype)->name;
  if (s.inner > 1) {
    const std::string name = std::string("softmax_strided/") + kind_name(s.kind) + "/" + dtype;
    plan.launch.run(name, [&] { return source(wgsl::softmax_strided, s.input.dtype); }, plan.strided_params,
                    groups_for(s.rows * s.inner), kind_name(s.kind));
    return;
  }
  if (plan.held) {
    const HeldShape shape = *plan.held;
    const std::string name = std::string("softmax_held/") + kind_name(s.kind) + "/" + dtype + "/" +
                             dtype_info(s.out.dtype)->name + "/" + shape.name();
    plan.launch.run(name, [&] { return held_source(s.input.dtype, s.out.dtype, shape); }, plan.held_params,
                    shape.groups(s.rows), kind_name(s.kind));
    return;
  }
  const std::string name = std::string("softmax/") + kind_name(s.kind) + "/" + dtype;
  plan.launch.run(name, [&] { return source(wgsl::softmax, s.input.dtype); }, plan.params, s.rows, kind_name(s.kind));
}

} // namespace torch_dml::kernels
