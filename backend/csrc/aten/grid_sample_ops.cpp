// F.grid_sample in 2-D (grid_sampler_2d and its backward; STN, optical flow warps, deformable
// attention's reference path) composed from dml ops, bilinear and nearest, with every padding mode
// and align_corners; bicubic and 3-D grids stay on the CPU. The CPU's formulas, over whole tensors:
// each grid coordinate unnormalized, then clipped or reflected (with the derivative of each step for
// the grid's gradient), the four corners' weights and in-range masks, their values gathered from the
// input laid out as (n, position, channel) rows. The input's gradient scatters each output's weighted
// gradient to its corners in one index_add, corners interleaved per output as the CPU adds them
// (deterministic, no atomics); the grid's sums the corners' differences over channels.
#include <ATen/ATen.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/grid_sampler_2d_backward_ops.h>
#include <ATen/ops/grid_sampler_2d_ops.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <tuple>
#include <vector>

#include "aten/common.h"
#include "aten/fallback.h"
#include "aten/index_range.h"
#include "aten/widen.h"

namespace torch_dml::aten {
namespace {

constexpr int64_t kBilinear = 0, kNearest = 1;
constexpr int64_t kBorder = 1, kReflection = 2;

bool sampled_here(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation_mode) {
  const auto type = input.scalar_type();
  return (interpolation_mode == kBilinear || interpolation_mode == kNearest) && input.dim() == 4 &&
      grid.dim() == 4 && grid.size(3) == 2 && grid.size(0) == input.size(0) && grid.scalar_type() == type &&
      (type == c10::kFloat || type == c10::kHalf || type == c10::kBFloat16 || type == c10::kDouble) &&
      input.size(2) > 0 && input.size(3) > 0;
}

// A coordinate's source position and d(position)/d(coordinate) (undefined when not asked for).
struct Source {
  at::Tensor position, slope;
};

// clip_coordinates(_set_grad): [0, size - 1]; the slope is 1 strictly inside only.
void clip(Source& s, int64_t size, bool slope) {
  if (slope) s.slope = s.slope * at::logical_and(s.position > 0, s.position < size - 1);
  s.position = s.position.clamp(0, size - 1);
}

// reflect_coordinates(_set_grad) between twice_low / 2 and twice_high / 2.
void reflect(Source& s, int64_t twice_low, int64_t twice_high, bool slope) {
  if (twice_low == twice_high) {
    s.position = at::zeros_like(s.position);
    if (slope) s.slope = at::zeros_like(s.position);
    return;
  }
  const double low = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  const at::Tensor shifted = s.position - low;
  const at::Tensor distance = shifted.abs();
  const at::Tensor extra = at::fmod(distance, span);
  const at::Tensor even = at::remainder(at::floor(distance / span), 2) == 0;
  s.position = at::where(even, extra + low, (span + low) - extra);
  if (slope) {
    const at::Tensor sign = at::where(shifted < 0, -1.0, 1.0).to(shifted.scalar_type());
    s.slope = s.slope * at::where(even, sign, -sign);
  }
}

// grid_sampler_compute_source_index(_set_grad) over one coordinate of the whole grid.
Source source_index(const at::Tensor& coordinate, int64_t size, int64_t padding_mode, bool align_corners, bool slope) {
  Source s;
  s.position = align_corners ? (coordinate + 1) / 2 * (size - 1) : ((coordinate + 1) * size - 1) / 2;
  if (slope) s.slope = at::full_like(coordinate, align_corners ? (size - 1) / 2.0 : size / 2.0);
  if (padding_mode == kBorder) {
    clip(s, size, slope);
  } else if (padding_mode == kReflection) {
    if (align_corners) reflect(s, 0, 2 * (size - 1), slope);
    else reflect(s, -1, 2 * size - 1, slope);
    clip(s, size, slope);
  }
  return s;
}

// One corner of each output's interpolation: its flat position in (h, w), whether it lies in the
// input, and its weight.
struct Corner {
  at::Tensor flat, inside, weight;
};

Corner corner(const at::Tensor& x, const at::Tensor& y, const at::Tensor& weight, int64_t h, int64_t w) {
  Corner c;
  c.inside = at::logical_and(at::logical_and(x >= 0, x <= w - 1), at::logical_and(y >= 0, y <= h - 1));
  c.flat = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).to(c10::kLong).reshape({x.size(0), -1});
  c.weight = weight.reshape({x.size(0), -1, 1});
  c.inside = c.inside.reshape({x.size(0), -1, 1});
  return c;
}

struct Sampling {
  Source x, y;
  std::vector<Corner> corners; // bilinear: nw, ne, sw, se; nearest: one
  at::Tensor x0, y0, x1, y1;   // bilinear's corner coordinates
};

Sampling sampling(const at::Tensor& grid, int64_t h, int64_t w, int64_t interpolation_mode, int64_t padding_mode,
                  bool align_corners, bool slope) {
  Sampling s;
  s.x = source_index(grid.select(3, 0), w, padding_mode, align_corners, slope);
  s.y = source_index(grid.select(3, 1), h, padding_mode, align_corners, slope);
  const at::Tensor& ix = s.x.position;
  const at::Tensor& iy = s.y.position;
  if (interpolation_mode == kNearest) {
    const at::Tensor rx = at::round(ix), ry = at::round(iy);
    s.corners.push_back(corner(rx, ry, at::ones_like(ix), h, w));
    return s;
  }
  s.x0 = at::floor(ix), s.y0 = at::floor(iy), s.x1 = s.x0 + 1, s.y1 = s.y0 + 1;
  s.corners.push_back(corner(s.x0, s.y0, (s.x1 - ix) * (s.y1 - iy), h, w));
  s.corners.push_back(corner(s.x1, s.y0, (ix - s.x0) * (s.y1 - iy), h, w));
  s.corners.push_back(corner(s.x0, s.y1, (s.x1 - ix) * (iy - s.y0), h, w));
  s.corners.push_back(corner(s.x1, s.y1, (ix - s.x0) * (iy - s.y0), h, w));
  return s;
}

// The input as (n, h * w, c) rows, and each corner's values there (0 outside the input).
at::Tensor rows_of(const at::Tensor& input) {
  return input.permute({0, 2, 3, 1}).reshape({input.size(0), -1, input.size(1)});
}

at::Tensor values_at(const at::Tensor& rows, const Corner& c) {
  const at::Tensor index = c.flat.unsqueeze(-1).expand({c.flat.size(0), c.flat.size(1), rows.size(2)});
  PositionsChecked checked; // clamped into the input
  return at::where(c.inside, rows.gather(1, index), 0);
}

at::Tensor sample(const at::Tensor& input, const at::Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                  bool align_corners) {
  c10::DeviceGuard guard(input.device());
  const at::Tensor x = widened(input), g = widened(grid);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), oh = g.size(1), ow = g.size(2);
  const Sampling s = sampling(g, h, w, interpolation_mode, padding_mode, align_corners, false);
  const at::Tensor rows = rows_of(x);
  at::Tensor out;
  for (const Corner& corner : s.corners) {
    const at::Tensor term = values_at(rows, corner) * corner.weight;
    out = out.defined() ? out.add_(term) : term;
  }
  return out.view({n, oh, ow, c}).permute({0, 3, 1, 2}).contiguous().to(input.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> sample_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                   const at::Tensor& grid, int64_t interpolation_mode,
                                                   int64_t padding_mode, bool align_corners,
                                                   std::array<bool, 2> output_mask) {
  c10::DeviceGuard guard(input.device());
  const at::Tensor x = widened(input), g = widened(grid);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const Sampling s = sampling(g, h, w, interpolation_mode, padding_mode, align_corners, output_mask[1]);
  const at::Tensor grad = widened(grad_output).permute({0, 2, 3, 1}).reshape({n, -1, c}); // (n, p, c)
  at::Tensor grad_input, grad_grid;
  if (output_mask[0]) {
    // Every output's corners in turn, in one add: the CPU's order of accumulation.
    std::vector<at::Tensor> index, shares;
    for (const Corner& corner : s.corners) {
      index.push_back(corner.flat);
      shares.push_back(at::where(corner.inside, grad * corner.weight, 0));
    }
    const at::Tensor flat = at::stack(index, 2).view({n, -1});
    const at::Tensor source = at::stack(shares, 2).view({n, -1, c});
    at::Tensor rows = at::zeros({n, h * w, c}, grad.options());
    {
      PositionsChecked checked; // clamped into the input
      rows.scatter_add_(1, flat.unsqueeze(-1).expand({n, flat.size(1), c}), source);
    }
    grad_input = rows.view({n, h, w, c}).permute({0, 3, 1, 2}).contiguous().to(input.scalar_type());
  }
  if (output_mask[1]) {
    if (interpolation_mode == kNearest) {
      grad_grid = at::zeros_like(grid);
    } else {
      const at::Tensor rows = rows_of(x);
      std::vector<at::Tensor> v;
      for (const Corner& corner : s.corners) v.push_back(values_at(rows, corner));
      const auto shape = std::vector<int64_t>{n, -1, 1};
      const at::Tensor ix = s.x.position.reshape(shape), iy = s.y.position.reshape(shape);
      const at::Tensor x0 = s.x0.reshape(shape), x1 = s.x1.reshape(shape);
      const at::Tensor y0 = s.y0.reshape(shape), y1 = s.y1.reshape(shape);
      // d out / d ix and d iy per channel, summed against the output's gradient.
      const at::Tensor gx = (((v[1] - v[0]) * (y1 - iy) + (v[3] - v[2]) * (iy - y0)) * grad).sum(2);
      const at::Tensor gy = (((v[2] - v[0]) * (x1 - ix) + (v[3] - v[1]) * (ix - x0)) * grad).sum(2);
      grad_grid = at::stack({gx.view_as(s.x.slope) * s.x.slope, gy.view_as(s.y.slope) * s.y.slope}, 3)
                      .to(grid.scalar_type());
    }
  }
  return {grad_input, grad_grid};
}

// Registered for dml from backend/ops/native.yaml (python -m backend.codegen).
#include "aten/generated/registrations/grid_sample_ops.inc"

} // namespace
} // namespace torch_dml::aten
