// When a GEMM-shaped kernel takes its 128x128 tile (gemm128.wgsl; conv2d.wgsl's /t128) rather than its
// 64x64 one. The wide tile does twice the FMAs per workgroup-memory read but has a quarter of the
// workgroups, and a GPU given fewer workgroups than it has compute units leaves the rest idle: on an
// H200, gemm128 ran a 1024^3 float32 product (64 workgroups) at 3.9 TFLOP/s against 13.6 at 2048^3 (256
// workgroups). So on a GPU the wide tile is taken only where at least 256 of its workgroups remain:
// about two per SM of the largest GPUs (132 on an H100), which WebGPU does not count for us. A CPU
// adapter (lavapipe) runs workgroups on a few threads, which a handful fill: there the wide tile ran
// 1024^3 and 2048x128x384 twice as fast as the 64x64 one.
#pragma once

#include <cstdint>

#include "runtime/device.h"

namespace torch_dml::kernels {

constexpr uint64_t kNarrowTile = 64, kWideTile = 128;

// The fewest wide-tile workgroups for which `context` takes the wide tile.
uint64_t wide_tile_groups(const runtime::DeviceContext& context);
// Tests: a floor for every adapter (0: each adapter's own again); returns the previous one.
uint64_t set_wide_tile_groups(uint64_t groups);

// The tile edge for an m x n output repeated `batches` times (batches or convolution groups).
inline uint64_t tile_for(const runtime::DeviceContext& context, uint64_t m, uint64_t n, uint64_t batches) {
  const uint64_t wide = (m + kWideTile - 1) / kWideTile * ((n + kWideTile - 1) / kWideTile) * batches;
  return m >= kWideTile && n >= kWideTile && wide >= wide_tile_groups(context) ? kWideTile : kNarrowTile;
}

} // namespace torch_dml::kernels
