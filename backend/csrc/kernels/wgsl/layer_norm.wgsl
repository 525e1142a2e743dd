// Layer normalisation over contiguous rows, forward: a workgroup per row takes the mean, then the
// mean square deviation from it (two passes, so a constant row has variance exactly 0), writes mean and
// rstd, then the normalised row with the optional weight and bias. {{acc}} arithmetic (float64 for
// float64, float32 for the rest); row sums fold with lib/workgroup_reduce.wgsl. Without a weight or bias the caller binds the input in its place
// (never read), so every variant has the same bindings.
//! include lib/grid.wgsl
//! include lib/workgroup_reduce.wgsl
//! include lib/layer_norm_rows.wgsl

struct Params {
  rows: u32,
  length: u32,
  eps: vec2<u32>, // the {{acc}} value's bits (float32: the first word)
  out_offset: u32,
  mean_offset: u32,
  rstd_offset: u32,
  x_offset: u32,
  weight_offset: u32,
  bias_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> mean_out: array<{{acc}}>;
@group(0) @binding(2) var<storage, read_write> rstd_out: array<{{acc}}>;
@group(0) @binding(3) var<storage, read_write> x: array<{{word}}>;
@group(0) @binding(4) var<storage, read_write> weight: array<{{word}}>;
@group(0) @binding(5) var<storage, read_write> bias: array<{{word}}>;
@group(0) @binding(6) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = p.x_offset + row * p.length;
  var total = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) { total += x_at(base + i); }
  let mean = workgroup_sum(lane, total) / {{acc}}(p.length);
  var squares = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) { squares += (x_at(base + i) - mean) * (x_at(base + i) - mean); }
  let variance = workgroup_sum(lane, squares) / {{acc}}(p.length);
  let rstd = {{rstd}};
  if (lane == 0u) {
    mean_out[p.mean_offset + row] = mean;
    rstd_out[p.rstd_offset + row] = rstd;
  }
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    var v = (x_at(base + i) - mean) * rstd;
    v = {{apply_weight}};
    v = {{apply_bias}};
    out[p.out_offset + row * p.length + i] = v;
  }
}
