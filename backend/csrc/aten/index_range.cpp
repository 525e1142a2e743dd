#include "aten/index_range.h"

#include <ATen/ops/aminmax.h>
#include <ATen/ops/stack.h>

#include <tuple>

#include "aten/common.h"
#include "kernels/index_check.h"

namespace torch_dml::aten {
namespace {

thread_local int t_positions_checked = 0;

} // namespace

PositionsChecked::PositionsChecked() {
  ++t_positions_checked;
}

PositionsChecked::~PositionsChecked() {
  --t_positions_checked;
}

void check_index_range(const at::Tensor& index, int64_t low, int64_t high, const std::string& op,
                       const std::string& message, std::optional<int64_t> allowed, bool writes,
                       bool index_error) {
  if (index.numel() == 0 || t_positions_checked > 0) return;
  const auto [smallest, largest] = at::aminmax(index.reshape({-1}));
  const at::Tensor bounds = at::stack({smallest, largest}); // the check reads it in stream order
  kernels::record_index_check(context_of(bounds), {.bounds = device_ref(bounds),
                                                   .low = low,
                                                   .high = high,
                                                   .allowed = allowed,
                                                   .op = op,
                                                   .message = message,
                                                   .at_op = writes,
                                                   .index_error = index_error});
}

} // namespace torch_dml::aten
