#include "kernels/wide_tile.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace torch_dml::kernels {
namespace {

constexpr uint64_t kGpuWideTileGroups = 256;
std::atomic<uint64_t> forced_groups{0};

} // namespace

uint64_t wide_tile_groups(const runtime::DeviceContext& context) {
  if (const uint64_t forced = forced_groups.load(std::memory_order_relaxed)) return forced;
  if (context.adapter().adapter_type != "cpu") return kGpuWideTileGroups;
  static const uint64_t threads = std::max(1u, std::thread::hardware_concurrency());
  return 2 * threads;
}

uint64_t set_wide_tile_groups(uint64_t groups) {
  return forced_groups.exchange(groups);
}

} // namespace torch_dml::kernels
