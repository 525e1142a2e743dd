#include "kernels/index_check.h"

#include <c10/util/Exception.h>

#include <mutex>

#include "kernels/generated/wgsl_params.h"
#include "kernels/generated/wgsl_sources.h"
#include "kernels/launch.h"
#include "kernels/wgsl_family.h"
#include "runtime/device_checks.h"
#include "runtime/stream.h"

namespace torch_dml::kernels {
namespace {

void split(int64_t value, uint32_t (&words)[2]) {
  const auto bits = static_cast<uint64_t>(value);
  words[0] = static_cast<uint32_t>(bits);
  words[1] = static_cast<uint32_t>(bits >> 32);
}

} // namespace

void record_index_check(runtime::DeviceContext& context, const IndexCheck& check) {
  const c10::ScalarType type = check.bounds.dtype;
  TORCH_CHECK(type == c10::kLong || type == c10::kInt, "torch_dml: an index check of ", type, " bounds");
  std::lock_guard<std::recursive_mutex> lock(context.mutex());
  runtime::CommandStream& stream = context.stream();
  if (stream.checks().pending() >= runtime::DeviceChecks::kMaxPending) stream.synchronize();
  Launch launch(context, check.op, type);
  const uint32_t first = launch.bind(check.bounds, 2);
  launch.bind_buffer(stream.checks().record());
  wgsl::IndexCheckParams p;
  p.wide = type == c10::kLong ? 1 : 0;
  p.first = first * (p.wide ? 2 : 1);
  split(check.low, p.low);
  split(check.high, p.high);
  p.has_allowed = check.allowed.has_value() ? 1 : 0;
  split(check.allowed.value_or(0), p.allowed);
  p.id = stream.checks().add(check.op, check.message, check.index_error, check.at_op);
  launch.run("index_check", [] { return render(wgsl::index_check, {}); }, p, 1);
  if (check.at_op || runtime::synchronous_checks()) stream.synchronize();
}

} // namespace torch_dml::kernels
