#include "kernels/sort_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

// Order-preserving unsigned keys of each computation type (see sort.wgsl).
constexpr const char* kF32Key =
    "fn sort_key(v: f32) -> u32 {\n"
    "  var u = bitcast<u32>(v);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }\n"
    "  if (u == 0x80000000u) { u = 0u; }\n"
    "  if ((u & 0x80000000u) != 0u) { return ~u; }\n"
    "  return u | 0x80000000u;\n"
    "}\n";
constexpr const char* kF64Key =
    "fn sort_key(v: f64) -> u64 {\n"
    "  var u = bitcast<u64>(v);\n"
    "  if ((u & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu) { return 0xfffffffffffffffflu; }\n"
    "  if (u == 0x8000000000000000lu) { u = 0lu; }\n"
    "  if ((u & 0x8000000000000000lu) != 0lu) { return ~u; }\n"
    "  return u | 0x8000000000000000lu;\n"
    "}\n";
constexpr const char* kI32Key = "fn sort_key(v: i32) -> u32 { return bitcast<u32>(v) ^ 0x80000000u; }\n";
constexpr const char* kI64Key = "fn sort_key(v: i64) -> u64 { return bitcast<u64>(v) ^ 0x8000000000000000lu; }\n";

uint32_t network_width(uint64_t length) {
  uint32_t width = 1;
  while (width < length) width <<= 1;
  return width;
}

struct Plan {
  Launch launch;
  wgsl::SortParams params;
};

Plan plan(runtime::DeviceContext& context, const SortProblem& s) {
  Plan plan{Launch(context, "sort", s.src.dtype), {}};
  Launch& launch = plan.launch;
  const auto info = dtype_info(s.src.dtype);
  launch.require(info.has_value() && (!info->needs || context.has(*info->needs)), "a dtype the adapter cannot compute on");
  launch.require(context.has(runtime::Feature::ShaderInt64), "int64 indices need shader-int64");
  launch.require(s.length <= kSortCapacity, "rows longer than the in-workgroup sort holds");
  launch.require(s.out.dtype == c10::kLong, "indices that are not int64");
  launch.require_u32(s.rows * s.length, "elements");
  wgsl::SortParams& p = plan.params;
  p.rows = static_cast<uint32_t>(s.rows);
  p.length = static_cast<uint32_t>(s.length);
  p.width = network_width(s.length);
  p.descending = s.descending ? 1u : 0u;
  p.out_offset = launch.bind(s.out, s.rows * s.length); // @binding(0)
  p.src_offset = launch.bind(s.src, s.rows * s.length); // @binding(1)
  return plan;
}

std::string source(c10::ScalarType type) {
  const Value value = dtype_info(type)->value;
  // Every dtype sorts as its computation type, bool as int32 0/1.
  const Value as = value == Value::Bool ? Value::I32 : value;
  const bool wide = as == Value::F64 || as == Value::I64;
  const char* key_function = as == Value::F32 ? kF32Key : as == Value::F64 ? kF64Key : as == Value::I64 ? kI64Key : kI32Key;
  const char* src_array = type == c10::kDouble ? "array<f64>" : type == c10::kLong ? "array<i64>" : "array<u32>";
  return render(wgsl::sort, {{"capacity", std::to_string(kSortCapacity)},
                             {"src_array", src_array},
                             {"key", wide ? "u64" : "u32"},
                             {"key_function", key_function},
                             {"load", convert_value(typed_load(type, "src", "i"), value, as)},
                             {"key_of_v", "sort_key(v)"},
                             {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

} // namespace

std::string sort_unsupported_reason(runtime::DeviceContext& context, const SortProblem& s) {
  return plan(context, s).launch.reason();
}

void sort_rows(runtime::DeviceContext& context, const SortProblem& s) {
  Plan plan = kernels::plan(context, s);
  plan.launch.run(std::string("sort/") + dtype_info(s.src.dtype)->name, [&] { return source(s.src.dtype); },
                  plan.params, s.rows);
}

} // namespace torch_dml::kernels
