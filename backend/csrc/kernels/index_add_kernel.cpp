#include "kernels/index_add_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/elementwise_math.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_store.h"

namespace torch_dml::kernels {
namespace {

using Plan = LaunchPlan<wgsl::IndexAddParams>;

// Elements a thread stores: 1- and 2-byte dtypes a whole word of them, since WGSL has no 8- or 16-bit
// stores, and a word shared by threads would need atomics.
uint64_t per_word(c10::ScalarType dtype) {
  return c10::elementSize(dtype) < 4 ? 4 / c10::elementSize(dtype) : 1;
}

bool small_integral(c10::ScalarType dtype) {
  return dtype == c10::kChar || dtype == c10::kByte || dtype == c10::kShort || dtype == c10::kBool;
}

// What the terms are summed in: float32 for the float dtypes up to 4 bytes, the dtype itself else
// (integer sums wrap around as the CPU's do); int32 for the 1- and 2-byte integers, whose wrapped sum
// keeps the low bits the CPU's narrower wrapping sum ends with; bool or-ed in int32.
Value accumulator(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kDouble: return Value::F64;
    case c10::kInt: return Value::I32;
    case c10::kLong: return Value::I64;
    default: return small_integral(dtype) ? Value::I32 : Value::F32;
  }
}

// bool's alpha counts as true or false, as the CPU converts it to the dtype (2 and 256 are true).
c10::Scalar alpha_of(const IndexAddProblem& a) {
  return a.out.dtype == c10::kBool ? c10::Scalar(a.alpha.to<bool>()) : a.alpha;
}

bool unit_alpha(const c10::Scalar& alpha) {
  return alpha.isIntegral(false) ? alpha.toLong() == 1 : alpha.toDouble() == 1.0;
}

Plan plan(runtime::DeviceContext& context, const IndexAddProblem& a) {
  const c10::ScalarType dtype = a.out.dtype;
  Plan plan(context, a.op, dtype);
  Launch& launch = plan.launch;
  launch.require(is_float_family(dtype) || dtype == c10::kDouble ||
                     dtype == c10::kInt || dtype == c10::kLong || small_integral(dtype),
                 "a dtype other than a float, an integer or bool");
  // A product, extreme or mean of 1- and 2-byte integers would need the CPU's narrower intermediate
  // rounding; a sum's wrapped low bits do not.
  launch.require(!small_integral(dtype) || (a.fold == IndexFold::Sum && !a.divide_by_count),
                 "a fold other than a sum of 1- or 2-byte integers or bool");
  launch.require(dtype != c10::kDouble || context.has(runtime::Feature::ShaderF64), "float64 needs shader-f64");
  launch.require(dtype != c10::kLong || context.has(runtime::Feature::ShaderInt64), "int64 needs shader-int64");
  // A float64 alpha other than 1, the correctly rounded division and the NaN tests of max / min are
  // reassembled from or test u32/u64 words.
  launch.require(dtype != c10::kDouble ||
                     (unit_alpha(a.alpha) && !a.divide_by_count && a.fold == IndexFold::Sum) ||
                     context.has(runtime::Feature::ShaderInt64),
                 "float64 with alpha != 1, scale_grad_by_freq or a fold other than a sum needs shader-int64");
  const uint64_t rows = a.sort.buckets, positions = a.sort.positions;
  const uint64_t elements = a.outer * rows * a.inner;
  launch.require_u32(elements, "elements of out");
  launch.require_u32(a.outer * positions * a.inner, "elements of source");
  wgsl::IndexAddParams& p = plan.params;
  p.units = static_cast<uint32_t>((elements + per_word(dtype) - 1) / per_word(dtype));
  p.elements = static_cast<uint32_t>(elements);
  p.rows = static_cast<uint32_t>(rows);
  p.inner = static_cast<uint32_t>(a.inner);
  p.positions = static_cast<uint32_t>(positions);
  p.out_offset = launch.bind(a.out, elements);
  p.source_offset = launch.bind(a.source, a.outer * positions * a.inner);
  p.counts_offset = launch.bind(a.sort.counts, rows);
  p.ends_offset = launch.bind(a.sort.ends, rows);
  p.order_offset = launch.bind(a.sort.order, positions);
  launch.require(p.out_offset % per_word(dtype) == 0, "out not starting on a word");
  encode_scalar(alpha_of(a), accumulator(dtype), dtype, p.scalars[0]);
  return plan;
}

const char* fold_name(IndexFold fold) {
  switch (fold) {
    case IndexFold::Sum: return "sum";
    case IndexFold::Prod: return "prod";
    case IndexFold::Max: return "amax";
    case IndexFold::Min: return "amin";
    case IndexFold::Mean: return "mean";
  }
  return "?";
}

std::string combine(IndexFold fold, c10::ScalarType dtype) {
  if (dtype == c10::kBool) return "sum | term";
  switch (fold) {
    case IndexFold::Prod: return "sum * term";
    case IndexFold::Max: return "maximum_(sum, term)";
    case IndexFold::Min: return "minimum_(sum, term)";
    default: return "sum + term";
  }
}

// The division that ends a fold: embedding's scale_grad_by_freq, or a mean over the terms (and out's
// old value when it is folded in); floor division for integers, as the CPU's mean rounds. Both divide
// correctly rounded (WGSL's `/` may be 2.5 ulp off).
std::string divide(const IndexAddProblem& a, const std::string& type, bool integral) {
  if (a.divide_by_count) return "  if (count > 1u) { sum = div_rn_(sum, " + type + "(count)); }";
  if (a.fold != IndexFold::Mean) return "";
  const std::string n = "count" + std::string(a.fold_out ? " + 1u" : "");
  return "  if (count > 0u) { sum = " + std::string(integral ? "div_floor_int_" : "div_rn_") + "(sum, " + type + "(" +
      n + ")); }";
}

std::string source(const IndexAddProblem& a, bool unit) {
  const c10::ScalarType dtype = a.out.dtype;
  const Value acc = accumulator(dtype);
  const std::string type = wgsl_type(acc);
  const bool integral = dtype == c10::kInt || dtype == c10::kLong;
  const std::string combined = combine(a.fold, dtype), divided = divide(a, type, integral);
  return render(wgsl::index_add,
                {{"array", typed_array_type(dtype)},
                 {"helpers", math_helpers(combined + divided, acc)},
                 {"acc", type},
                 {"fold_out", a.fold_out ? "true" : "false"},
                 {"source_load", typed_load(dtype, "source", "j")},
                 {"start", a.from_zero ? "0" : typed_load(dtype, "out", "p.out_offset + e")},
                 {"alpha", unit ? type + "(1)" : decode_scalar(0, acc)},
                 {"term", unit ? "source_at(j)" : "alpha * source_at(j)"},
                 {"combine", combined},
                 {"divide", divided},
                 {"lanes", std::to_string(per_word(dtype))},
                 {"stored", store_form(dtype, dtype == c10::kBool ? "summed(e) != 0" : "summed(e)")},
                 {"store", std::string(per_word(dtype) == 1 ? wgsl::part_index_add_store_one
                                                            : wgsl::part_index_add_store_packed)},
                 {"workgroup_size", std::to_string(kWorkgroupSize)}});
}

// With outer == 1 (embedding backward, index_add along dim 0) out is bound a slice of rows at a time,
// so an out larger than one storage binding (GPT-2's 50257 x 768 float32 embedding is 154 MB, past
// lavapipe's 128 MiB) still runs: each slice is its own dispatch over its rows' groups.
uint64_t rows_per_slice(runtime::DeviceContext& context, const IndexAddProblem& a) {
  const uint64_t rows = a.sort.buckets;
  if (a.outer != 1 || a.inner == 0) return rows;
  const WGPULimits& limits = context.limits();
  const uint64_t bytes = limits.maxStorageBufferBindingSize - limits.minStorageBufferOffsetAlignment - 4;
  // A count that is a multiple of 4 keeps every slice of a 1- or 2-byte dtype starting on a word.
  const uint64_t fit = bytes / (a.inner * c10::elementSize(a.out.dtype)) & ~uint64_t{3};
  return std::min(rows, std::max<uint64_t>(fit, 4));
}

IndexAddProblem slice(const IndexAddProblem& a, uint64_t first, uint64_t rows) {
  IndexAddProblem part = a;
  part.sort.buckets = rows;
  part.sort.counts.element_offset += first;
  part.sort.ends.element_offset += first;
  part.out.element_offset += first * a.inner;
  return part;
}

} // namespace

std::string index_add_unsupported_reason(runtime::DeviceContext& context, const IndexAddProblem& problem) {
  std::string reason = index_sort_unsupported_reason(context, problem.sort);
  return reason.empty() ? plan(context, slice(problem, 0, rows_per_slice(context, problem))).launch.reason()
                        : reason;
}

void index_add(runtime::DeviceContext& context, const IndexAddProblem& problem) {
  sort_positions_by_index(context, problem.sort);
  const c10::ScalarType dtype = problem.out.dtype;
  const bool unit = unit_alpha(alpha_of(problem));
  const std::string name = std::string("index_add/") + dtype_info(dtype)->name + (unit ? "" : "/alpha") +
      (problem.from_zero ? "/from_zero" : "") + (problem.divide_by_count ? "/by_count" : "") +
      (problem.fold == IndexFold::Sum ? "" : std::string("/") + fold_name(problem.fold)) +
      (problem.fold_out ? "" : "/no_out");
  const uint64_t step = rows_per_slice(context, problem);
  for (uint64_t first = 0; first < problem.sort.buckets; first += step) {
    Plan plan = kernels::plan(context, slice(problem, first, std::min(step, problem.sort.buckets - first)));
    plan.launch.run(name, [&] { return source(problem, unit); }, plan.params,
                    groups_for(plan.params.units));
  }
}

} // namespace torch_dml::kernels
