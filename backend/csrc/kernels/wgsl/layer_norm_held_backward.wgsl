// Layer normalisation's input gradient over rows a team holds whole (lib/held_row.wgsl): the gradient
// and input rows are read once, both row sums folded from registers, and the input gradient written
// once in its dtype, with `weighted` = grad * normalised input in {{acc}} (whose column sums the caller
// takes for the weight gradient) where asked for. Rows too long to hold go to layer_norm_backward.wgsl.
// Without a weight the caller binds the input in its place (never read); without `weighted`, the
// input gradient. Offsets and `width` count vectors of {{vec_width}} elements.
//! include lib/grid.wgsl
//! include lib/team_reduce.wgsl
//! include lib/held_row.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  rows: u32,
  width: u32,
  grad_input_offset: u32,
  weighted_offset: u32,
  g_offset: u32,
  x_offset: u32,
  mean_offset: u32,
  rstd_offset: u32,
  weight_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> grad_input: array<{{out_word}}>;
@group(0) @binding(1) var<storage, read_write> weighted: array<{{weighted_word}}>;
@group(0) @binding(2) var<storage, read_write> g: array<{{in_word}}>;
@group(0) @binding(3) var<storage, read_write> x: array<{{in_word}}>;
@group(0) @binding(4) var<storage, read_write> mean: array<{{acc}}>;
@group(0) @binding(5) var<storage, read_write> rstd: array<{{acc}}>;
@group(0) @binding(6) var<storage, read_write> weight: array<{{in_word}}>;
@group(0) @binding(7) var<uniform> p: Params;

alias Vector = array<{{acc}}, {{vec_width}}>;

fn x_at(i: u32) -> Vector {
  return {{load_x}};
}

fn g_at(i: u32) -> Vector {
  return {{load_g}};
}

fn weight_at(i: u32) -> Vector {
  return {{load_weight}};
}

fn store(i: u32, v: Vector) {
  {{store}}
}

fn store_weighted(i: u32, v: Vector) {
  {{store_weighted}}
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local_index: u32) {
  let s = seat_of(group, groups, local_index);
  let gbase = p.g_offset + s.row * p.width;
  let xbase = p.x_offset + s.row * p.width;
  var mu = {{acc}}(0);
  var r = {{acc}}(0);
  if (s.live) {
    mu = mean[p.mean_offset + s.row];
    r = rstd[p.rstd_offset + s.row];
  }
  // The lane keeps grad * weight and the normalised input.
  var gw: array<{{acc}}, {{held_elements}}>;
  var xhat: array<{{acc}}, {{held_elements}}>;
  var sum_gw = {{acc}}(0);
  var sum_gw_xhat = {{acc}}(0);
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      let j = vector_index(s, k);
      var gv = g_at(gbase + j);
      var xv = x_at(xbase + j);
      var w = weight_at(p.weight_offset + j);
      var weighted_v: Vector;
      for (var c = 0u; c < VEC; c++) {
        let e = k * VEC + c;
        xhat[e] = (xv[c] - mu) * r;
        gw[e] = gv[c] * w[c];
        weighted_v[c] = gv[c] * xhat[e];
        sum_gw += gw[e];
        sum_gw_xhat += gw[e] * xhat[e];
      }
      if ({{keep_weighted}}) { store_weighted(p.weighted_offset + s.row * p.width + j, weighted_v); }
    }
  }
  sum_gw = team_sum(s.team, s.lane, sum_gw);
  sum_gw_xhat = team_sum(s.team, s.lane, sum_gw_xhat);
  let n = {{acc}}(p.width * VEC);
  let out_base = p.grad_input_offset + s.row * p.width;
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      var v: Vector;
      for (var c = 0u; c < VEC; c++) {
        let e = k * VEC + c;
        v[c] = r * (gw[e] - sum_gw / n - xhat[e] * sum_gw_xhat / n);
      }
      store(out_base + vector_index(s, k), v);
    }
  }
}
