// Layer normalisation's input gradient over contiguous rows, and `weighted` = grad * normalised input
// (whose column sums the caller takes with the reduce kernel for the weight gradient): a workgroup per
// row, {{acc}} arithmetic (float64 for float64, float32 for the rest), row sums folded with lib/workgroup_reduce.wgsl. Without a weight the caller
// binds the input in its place (never read).
//! include lib/grid.wgsl
//! include lib/workgroup_reduce.wgsl
//! include lib/layer_norm_rows.wgsl

struct Params {
  rows: u32,
  length: u32,
  grad_input_offset: u32,
  weighted_offset: u32,
  g_offset: u32,
  x_offset: u32,
  mean_offset: u32,
  rstd_offset: u32,
  weight_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> grad_input: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> weighted: array<{{acc}}>;
@group(0) @binding(2) var<storage, read_write> g: array<{{word}}>;
@group(0) @binding(3) var<storage, read_write> x: array<{{word}}>;
@group(0) @binding(4) var<storage, read_write> mean: array<{{acc}}>;
@group(0) @binding(5) var<storage, read_write> rstd: array<{{acc}}>;
@group(0) @binding(6) var<storage, read_write> weight: array<{{word}}>;
@group(0) @binding(7) var<uniform> p: Params;

fn g_at(i: u32) -> {{acc}} {
  return {{load_g}};
}

fn weight_at(i: u32) -> {{acc}} {
  return {{load_weight}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let gbase = p.g_offset + row * p.length;
  let xbase = p.x_offset + row * p.length;
  let mu = mean[p.mean_offset + row];
  let r = rstd[p.rstd_offset + row];
  var sum_gw = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) { sum_gw += g_at(gbase + i) * weight_at(i); }
  sum_gw = workgroup_sum(lane, sum_gw);
  var sum_gw_xhat = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    sum_gw_xhat += g_at(gbase + i) * weight_at(i) * (x_at(xbase + i) - mu) * r;
  }
  sum_gw_xhat = workgroup_sum(lane, sum_gw_xhat);
  let n = {{acc}}(p.length);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    let xhat = (x_at(xbase + i) - mu) * r;
    let gw = g_at(gbase + i) * weight_at(i);
    grad_input[p.grad_input_offset + row * p.length + i] = r * (gw - sum_gw / n - xhat * sum_gw_xhat / n);
    weighted[p.weighted_offset + row * p.length + i] = g_at(gbase + i) * xhat;
  }
}
