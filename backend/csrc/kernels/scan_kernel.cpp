#include "kernels/scan_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

// The op in kernel names and as errors name it (literals: Launch keeps a view of the latter).
struct OpNames {
  const char* kernel;
  const char* error;
};

OpNames names_of(ScanOp op) {
  switch (op) {
    case ScanOp::Sum: return {"sum", "scan (sum)"};
    case ScanOp::Product: return {"product", "scan (product)"};
    case ScanOp::LogSumExp: return {"logsumexp", "scan (logsumexp)"};
  }
  return {"?", "scan"};
}

Value value_of(c10::ScalarType acc) {
  return acc == c10::kDouble ? Value::F64 : acc == c10::kLong ? Value::I64 : Value::F32;
}

LaunchPlan<wgsl::ScanParams> plan(runtime::DeviceContext& context, const ScanProblem& s) {
  LaunchPlan<wgsl::ScanParams> plan(context, names_of(s.op).error, s.src.dtype);
  Launch& launch = plan.launch;
  const auto info = dtype_info(s.src.dtype);
  launch.require(info.has_value() && (!info->needs || context.has(*info->needs)), "a dtype the adapter cannot compute on");
  launch.require(s.out.dtype == scan_accumulation_type(context, s.src.dtype, s.op),
                 "an output not in the accumulation dtype");
  launch.require(s.out.dtype != c10::kLong || context.has(runtime::Feature::ShaderInt64), "int64 sums need shader-int64");
  launch.require(s.out.dtype != c10::kDouble ||
                     (context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64)),
                 "float64 needs shader-f64 and shader-int64");
  launch.require_u32(s.rows * s.length, "elements");
  plan.params.rows = static_cast<uint32_t>(s.rows);
  plan.params.length = static_cast<uint32_t>(s.length);
  plan.params.out_offset = launch.bind(s.out, s.rows * s.length); // @binding(0)
  plan.params.src_offset = launch.bind(s.src, s.rows * s.length); // @binding(1)
  return plan;
}

std::string source(const ScanProblem& s) {
  const c10::ScalarType type = s.src.dtype;
  const Value acc = value_of(s.out.dtype);
  const std::string acc_type = wgsl_type(acc);
  const Value value = dtype_info(type)->value;
  const char* src_array = type == c10::kDouble ? "array<f64>" : type == c10::kLong ? "array<i64>" : "array<u32>";
  std::string combine = "a + b", identity = zero_literal(acc), helpers;
  if (s.op == ScanOp::Product) {
    combine = "a * b";
    identity = one_literal(acc);
  } else if (s.op == ScanOp::LogSumExp) {
    // The elementwise family's logaddexp: NaN and infinities by test, log1p for the small term.
    combine = "logaddexp_(a, b)";
    identity = acc_type + "(bitcast<f32>(0xff800000u))";
    helpers = math_helpers(combine, acc);
  }
  return render(wgsl::scan, {{"acc", acc_type},
                             {"src_array", src_array},
                             {"load", convert_value(typed_load(type, "src", "i"), value, acc)},
                             {"combine", combine},
                             {"identity", identity},
                             {"helpers", helpers},
                             {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

} // namespace

c10::ScalarType scan_accumulation_type(runtime::DeviceContext& context, c10::ScalarType type, ScanOp op) {
  if (type == c10::kDouble) return c10::kDouble;
  if (!c10::isFloatingType(type)) return c10::kLong;
  const bool wide = context.has(runtime::Feature::ShaderF64) && context.has(runtime::Feature::ShaderInt64);
  return op == ScanOp::LogSumExp && wide ? c10::kDouble : c10::kFloat;
}

std::string scan_unsupported_reason(runtime::DeviceContext& context, const ScanProblem& s) {
  return plan(context, s).reason();
}

void scan(runtime::DeviceContext& context, const ScanProblem& s) {
  const std::string name = std::string("scan/") + names_of(s.op).kernel + "/" + dtype_info(s.src.dtype)->name + "/" +
      dtype_info(s.out.dtype)->name;
  plan(context, s).run(name, [&] { return source(s); }, s.rows);
}

namespace {

LaunchPlan<wgsl::CompactParams> plan(runtime::DeviceContext& context, const CompactProblem& c) {
  LaunchPlan<wgsl::CompactParams> plan(context, "nonzero", c10::kLong);
  plan.launch.require(context.has(runtime::Feature::ShaderInt64), "int64 positions need shader-int64");
  plan.launch.require_u32(c.count, "elements");
  plan.params.count = static_cast<uint32_t>(c.count);
  plan.params.out_offset = plan.launch.bind(c.out, c.selected);
  plan.params.running_offset = plan.launch.bind(c.running, c.count);
  return plan;
}

} // namespace

std::string compact_unsupported_reason(runtime::DeviceContext& context, const CompactProblem& c) {
  return plan(context, c).reason();
}

void compact(runtime::DeviceContext& context, const CompactProblem& c) {
  plan(context, c).run("compact", [] { return render(wgsl::compact, {{"workgroup_size", std::to_string(kWorkgroupSize)}}); },
                       groups_for(c.count));
}

} // namespace torch_dml::kernels
