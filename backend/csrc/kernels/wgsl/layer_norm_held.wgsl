// Layer normalisation forward over rows a team holds whole (lib/held_row.wgsl): the row is read once,
// its mean and then the mean square deviation from it (so a constant row has variance exactly 0) folded
// from registers, and the normalised row written once in the output's dtype, with mean and rstd in
// {{acc}} (float64 for float64, float32 for the rest), the arithmetic type. Rows too long to hold go to layer_norm.wgsl. Without a weight or bias the caller binds the
// input in its place (never read). Offsets and `width` count vectors of {{vec_width}} elements.
//! include lib/grid.wgsl
//! include lib/team_reduce.wgsl
//! include lib/held_row.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  rows: u32,
  width: u32,
  eps: vec2<u32>, // the {{acc}} value's bits (float32: the first word)
  out_offset: u32,
  mean_offset: u32,
  rstd_offset: u32,
  x_offset: u32,
  weight_offset: u32,
  bias_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<{{out_word}}>;
@group(0) @binding(1) var<storage, read_write> mean_out: array<{{acc}}>;
@group(0) @binding(2) var<storage, read_write> rstd_out: array<{{acc}}>;
@group(0) @binding(3) var<storage, read_write> x: array<{{in_word}}>;
@group(0) @binding(4) var<storage, read_write> weight: array<{{in_word}}>;
@group(0) @binding(5) var<storage, read_write> bias: array<{{in_word}}>;
@group(0) @binding(6) var<uniform> p: Params;

alias Vector = array<{{acc}}, {{vec_width}}>;

fn x_at(i: u32) -> Vector {
  return {{load_x}};
}

fn weight_at(i: u32) -> Vector {
  return {{load_weight}};
}

fn bias_at(i: u32) -> Vector {
  return {{load_bias}};
}

fn store(i: u32, v: Vector) {
  {{store}}
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) local_index: u32) {
  let s = seat_of(group, groups, local_index);
  let base = p.x_offset + s.row * p.width;
  let n = {{acc}}(p.width * VEC);
  var held: array<{{acc}}, {{held_elements}}>;
  var total = {{acc}}(0);
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      var v = x_at(base + vector_index(s, k));
      for (var c = 0u; c < VEC; c++) {
        held[k * VEC + c] = v[c];
        total += v[c];
      }
    }
  }
  let mean = team_sum(s.team, s.lane, total) / n;
  var squares = {{acc}}(0);
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      for (var c = 0u; c < VEC; c++) {
        let d = held[k * VEC + c] - mean;
        squares += d * d;
      }
    }
  }
  let variance = team_sum(s.team, s.lane, squares) / n;
  let rstd = {{rstd}};
  if (s.live && s.lane == 0u) {
    mean_out[p.mean_offset + s.row] = mean;
    rstd_out[p.rstd_offset + s.row] = rstd;
  }
  let out_base = p.out_offset + s.row * p.width;
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      let j = vector_index(s, k);
      var w = weight_at(p.weight_offset + j);
      var b = bias_at(p.bias_offset + j);
      var v: Vector;
      for (var c = 0u; c < VEC; c++) {
        v[c] = (held[k * VEC + c] - mean) * rstd;
        v[c] = {{apply_weight}};
        v[c] = {{apply_bias}};
      }
      store(out_base + j, v);
    }
  }
}
