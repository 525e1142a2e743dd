#include "kernels/index_sort_kernel.h"

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"

namespace torch_dml::kernels {
namespace {

constexpr uint32_t kNoBucket = 0xFFFFFFFFu;

struct Plans {
  Launch count, scan, place;
  wgsl::IndexSortCountParams count_params;
  wgsl::IndexSortScanParams scan_params;
  wgsl::IndexSortPlaceParams place_params;
};

// int64 indices are read as two words each, so the index binds in words.
DeviceTensorRef as_index_words(const DeviceTensorRef& index) {
  DeviceTensorRef words = index;
  if (index.dtype == c10::kLong) words.element_offset *= 2;
  words.dtype = c10::kInt;
  return words;
}

Plans plan(runtime::DeviceContext& context, const IndexSortProblem& s) {
  Plans plans{Launch(context, "index sort", s.index.dtype), Launch(context, "index sort", s.index.dtype),
              Launch(context, "index sort", s.index.dtype), {}, {}, {}};
  const uint32_t index_words = s.index.dtype == c10::kLong ? 2 : 1;
  plans.count.require(s.index.dtype == c10::kLong || s.index.dtype == c10::kInt, "indices that are not int32/int64");
  plans.count.require(s.buckets < kNoBucket, "2^32 - 1 or more index values");
  plans.count.require_u32(s.positions * index_words, "index words");
  const uint32_t skip = s.skip >= 0 && static_cast<uint64_t>(s.skip) < s.buckets ? static_cast<uint32_t>(s.skip)
                                                                                : kNoBucket;
  const DeviceTensorRef words = as_index_words(s.index);

  wgsl::IndexSortCountParams& c = plans.count_params;
  c.positions = static_cast<uint32_t>(s.positions);
  c.buckets = static_cast<uint32_t>(s.buckets);
  c.skip = skip;
  c.index_words = index_words;
  c.counts_offset = plans.count.bind(s.counts, s.buckets);
  c.index_offset = plans.count.bind(words, s.positions * index_words);

  wgsl::IndexSortScanParams& a = plans.scan_params;
  a.buckets = c.buckets;
  a.starts_offset = plans.scan.bind(s.ends, s.buckets);
  a.counts_offset = plans.scan.bind(s.counts, s.buckets);

  wgsl::IndexSortPlaceParams& p = plans.place_params;
  p.positions = c.positions;
  p.buckets = c.buckets;
  p.skip = skip;
  p.index_words = index_words;
  p.order_offset = plans.place.bind(s.order, s.positions);
  p.cursor_offset = plans.place.bind(s.ends, s.buckets);
  p.index_offset = plans.place.bind(words, s.positions * index_words);
  return plans;
}

std::string source(const wgsl::Family& family) {
  return render(family, {{"workgroup_size", std::to_string(kWorkgroupSize)}});
}

} // namespace

std::string index_sort_unsupported_reason(runtime::DeviceContext& context, const IndexSortProblem& problem) {
  const Plans plans = plan(context, problem);
  for (const Launch* launch : {&plans.count, &plans.scan, &plans.place})
    if (!launch->ok()) return launch->reason();
  return {};
}

void sort_positions_by_index(runtime::DeviceContext& context, const IndexSortProblem& problem) {
  Plans plans = plan(context, problem);
  if (problem.buckets == 0) return;
  plans.count.run("index_sort/count", [] { return source(wgsl::index_sort_count); }, plans.count_params,
                  groups_for(problem.positions));
  plans.scan.run("index_sort/scan", [] { return source(wgsl::index_sort_scan); }, plans.scan_params, 1);
  plans.place.run("index_sort/place", [] { return source(wgsl::index_sort_place); }, plans.place_params, 1);
}

} // namespace torch_dml::kernels
