#include "kernels/sort_kernel.h"

#include "kernels/dtypes.h"
#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

#include <algorithm>
#include <vector>

namespace torch_dml::kernels {
namespace {

uint32_t network_width(uint64_t length) {
  uint32_t width = 1;
  while (width < length) width <<= 1;
  return width;
}

// What every launch of a sort of `s` requires.
void require_sortable(Launch& launch, runtime::DeviceContext& context, const SortProblem& s) {
  const auto info = dtype_info(s.src.dtype);
  launch.require(info.has_value() && (!info->needs || context.has(*info->needs)), "a dtype the adapter cannot compute on");
  launch.require(context.has(runtime::Feature::ShaderInt64), "int64 indices need shader-int64");
  launch.require(s.out.dtype == c10::kLong, "indices that are not int64");
  launch.require_u32(s.rows * s.length, "elements");
}

LaunchPlan<wgsl::SortParams> plan(runtime::DeviceContext& context, const SortProblem& s) {
  LaunchPlan<wgsl::SortParams> plan(context, "sort", s.src.dtype);
  Launch& launch = plan.launch;
  require_sortable(launch, context, s);
  launch.require(s.length <= kSortCapacity, "rows longer than the in-workgroup sort holds");
  wgsl::SortParams& p = plan.params;
  p.rows = static_cast<uint32_t>(s.rows);
  p.length = static_cast<uint32_t>(s.length);
  p.width = network_width(s.length);
  p.descending = s.descending ? 1u : 0u;
  p.out_offset = launch.bind(s.out, s.rows * s.length); // @binding(0)
  p.src_offset = launch.bind(s.src, s.rows * s.length); // @binding(1)
  return plan;
}

// The long-row sort: the runs' launch, then one launch per merge pass, reading scratch pass % 2 and
// writing the other (the last pass writes `out`).
struct MergePlan {
  LaunchPlan<wgsl::SortRunsParams> runs;
  std::vector<LaunchPlan<wgsl::SortMergeParams>> merges;
};

// Outputs each merge thread writes (sort_merge.wgsl): one diagonal search per chunk.
constexpr uint64_t kMergeChunk = 8;

// Threads of a merge pass: `chunks` per merged pair of each row.
uint64_t merge_threads(uint64_t rows, const wgsl::SortMergeParams& m) {
  const uint64_t pairs = (m.length + 2 * uint64_t{m.run} - 1) / (2 * uint64_t{m.run});
  return rows * pairs * m.chunks;
}

// Elements of a row of `length` made of runs of `run` once each run (a merged pair: `run` doubled) keeps
// its first `keep`.
uint64_t kept_length(uint64_t length, uint64_t run, uint64_t keep) {
  const uint64_t runs = (length + run - 1) / run;
  return (runs - 1) * keep + std::min(length - (runs - 1) * run, keep);
}

MergePlan merge_plan(runtime::DeviceContext& context, const SortProblem& s) {
  MergePlan plan{LaunchPlan<wgsl::SortRunsParams>(context, "sort", s.src.dtype), {}};
  const uint64_t n = s.rows * s.length;
  const uint64_t wanted = s.keep == 0 ? s.length : std::min(s.keep, s.length);
  Launch& runs = plan.runs.launch;
  require_sortable(runs, context, s);
  runs.require(s.keys[0].dtype == sort_key_dtype(s.src.dtype) && s.keys[1].dtype == s.keys[0].dtype &&
                        s.positions[0].dtype == c10::kInt && s.positions[1].dtype == c10::kInt,
                    "scratch buffers of the wrong dtype");
  runs.require_u32(s.length + kSortCapacity, "row elements");
  wgsl::SortRunsParams& r = plan.runs.params;
  r.rows = static_cast<uint32_t>(s.rows);
  r.length = static_cast<uint32_t>(s.length);
  r.runs = static_cast<uint32_t>((s.length + kSortCapacity - 1) / kSortCapacity);
  r.descending = s.descending ? 1u : 0u;
  r.keep = static_cast<uint32_t>(std::min(wanted, kSortCapacity));
  uint64_t length = kept_length(s.length, kSortCapacity, r.keep);
  r.out_length = static_cast<uint32_t>(length);
  r.keys_offset = runs.bind(s.keys[0], n);
  r.positions_offset = runs.bind(s.positions[0], n);
  r.src_offset = runs.bind(s.src, n);
  int pass = 0;
  for (uint64_t run = r.keep; run < length; run = std::min(2 * run, wanted), ++pass) {
    LaunchPlan<wgsl::SortMergeParams>& merge = plan.merges.emplace_back(context, "sort", s.src.dtype);
    Launch& launch = merge.launch;
    wgsl::SortMergeParams& m = merge.params;
    const uint64_t keep = std::min(2 * run, wanted);
    m.rows = r.rows;
    m.length = static_cast<uint32_t>(length);
    m.run = static_cast<uint32_t>(run);
    m.keep = static_cast<uint32_t>(keep);
    length = kept_length(length, 2 * run, keep);
    m.out_length = static_cast<uint32_t>(length);
    m.last = length <= keep ? 1u : 0u;
    m.chunks = static_cast<uint32_t>((keep + kMergeChunk - 1) / kMergeChunk);
    m.keys_in_offset = launch.bind(s.keys[pass % 2], n);
    m.positions_in_offset = launch.bind(s.positions[pass % 2], n);
    m.keys_out_offset = launch.bind(s.keys[1 - pass % 2], n);
    m.positions_out_offset = launch.bind(s.positions[1 - pass % 2], n);
    m.out_offset = launch.bind(s.out, s.rows * wanted);
  }
  return plan;
}

// What the shaders that compute keys fill in for values of `type`.
std::vector<Hole> key_holes(c10::ScalarType type) {
  const Value value = dtype_info(type)->value;
  // Every dtype sorts as its computation type, bool as int32 0/1.
  const Value as = value == Value::Bool ? Value::I32 : value;
  const bool wide = as == Value::F64 || as == Value::I64;
  // Order-preserving unsigned keys of each computation type (wgsl/parts/sort_key_*.wgsl).
  const std::string_view key_function = as == Value::F32   ? wgsl::part_sort_key_f32
                                        : as == Value::F64 ? wgsl::part_sort_key_f64
                                        : as == Value::I64 ? wgsl::part_sort_key_i64
                                                           : wgsl::part_sort_key_i32;
  const char* src_array = type == c10::kDouble ? "array<f64>" : type == c10::kLong ? "array<i64>" : "array<u32>";
  return {{"capacity", std::to_string(kSortCapacity)},
          {"src_array", src_array},
          {"key", wide ? "u64" : "u32"},
          {"key_function", std::string(key_function)},
          {"load", convert_value(typed_load(type, "src", "i"), value, as)},
          {"key_of_v", "sort_key(v)"},
          {"workgroup_size", std::to_string(kWorkgroupSize)}};
}

} // namespace

c10::ScalarType sort_key_dtype(c10::ScalarType type) {
  return c10::elementSize(type) == 8 ? c10::kLong : c10::kInt;
}

std::string sort_unsupported_reason(runtime::DeviceContext& context, const SortProblem& s) {
  if (!sort_merges(s.length)) return plan(context, s).reason();
  const MergePlan plan = merge_plan(context, s);
  if (!plan.runs.launch.ok()) return plan.runs.reason();
  for (const auto& merge : plan.merges)
    if (!merge.launch.ok()) return merge.reason();
  return {};
}

void sort_rows(runtime::DeviceContext& context, const SortProblem& s) {
  const std::string name = dtype_info(s.src.dtype)->name;
  if (!sort_merges(s.length)) {
    plan(context, s).run("sort/" + name, [&] { return render(wgsl::sort, key_holes(s.src.dtype)); }, s.rows);
    return;
  }
  MergePlan plan = merge_plan(context, s);
  plan.runs.run("sort_runs/" + name, [&] { return render(wgsl::sort_runs, key_holes(s.src.dtype)); },
                s.rows * plan.runs.params.runs);
  const bool wide = sort_key_dtype(s.src.dtype) == c10::kLong;
  const auto merge_source = [&] {
    return render(wgsl::sort_merge, {{"key", wide ? "u64" : "u32"},
                                     {"chunk", std::to_string(kMergeChunk)},
                                     {"workgroup_size", std::to_string(kWorkgroupSize)}});
  };
  for (auto& merge : plan.merges)
    merge.run(wide ? "sort_merge/u64" : "sort_merge/u32", merge_source, groups_for(merge_threads(s.rows, merge.params)));
}

} // namespace torch_dml::kernels
