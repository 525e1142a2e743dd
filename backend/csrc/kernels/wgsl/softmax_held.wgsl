// Softmax and log-softmax over rows a team holds whole (lib/held_row.wgsl), forward and backward, one
// entry point each: every element is read from memory once and its result written once, in the output's
// dtype. Rows too long to hold go to softmax.wgsl. Computes in {{acc}}; a NaN in a row reaches every
// output of the row through the sum. Offsets and `width` count vectors of {{vec_width}} elements.
//! include lib/grid.wgsl
//! include lib/team_reduce.wgsl
//! include lib/held_row.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  rows: u32,
  width: u32,
  input_offset: u32, // forward: x; backward: the forward's output y
  grad_offset: u32,  // backward: dL/dy (the forward binds its input here, unread)
  out_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<{{out_word}}>;
@group(0) @binding(1) var<storage, read_write> input: array<{{in_word}}>;
@group(0) @binding(2) var<storage, read_write> grad: array<{{in_word}}>;
@group(0) @binding(3) var<uniform> p: Params;

{{math}}

alias Vector = array<{{acc}}, {{vec_width}}>;

fn x_at(i: u32) -> Vector {
  return {{load_input}};
}

fn g_at(i: u32) -> Vector {
  return {{load_grad}};
}

fn store(i: u32, v: Vector) {
  {{store}}
}

alias Held = array<{{acc}}, {{held_elements}}>;

// Loads the lane's part of the row starting at vector `base` into `x`; returns its largest element.
fn load_row(s: Seat, base: u32, x: ptr<function, Held>) -> {{acc}} {
  var largest = {{acc}}({{lowest}});
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      var v = x_at(base + vector_index(s, k));
      for (var c = 0u; c < VEC; c++) {
        (*x)[k * VEC + c] = v[c];
        largest = select(largest, v[c], v[c] > largest);
      }
    }
  }
  return largest;
}

// Loads the lane's part of the forward output `y` and its gradient `dy` (rows starting at vector
// `base` and `grad_base`).
fn load_rows(s: Seat, base: u32, grad_base: u32, y: ptr<function, Held>, dy: ptr<function, Held>) {
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      var v = x_at(base + vector_index(s, k));
      var g = g_at(grad_base + vector_index(s, k));
      for (var c = 0u; c < VEC; c++) {
        (*y)[k * VEC + c] = v[c];
        (*dy)[k * VEC + c] = g[c];
      }
    }
  }
}

// softmax, or log-softmax where `logarithmic`: the entry points below pass a constant.
fn forward(group: vec3<u32>, groups: vec3<u32>, local_index: u32, logarithmic: bool) {
  let s = seat_of(group, groups, local_index);
  var x: Held;
  let largest = team_max(s.team, s.lane, load_row(s, p.input_offset + s.row * p.width, &x));
  var sum = {{acc}}(0);
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      for (var c = 0u; c < VEC; c++) {
        let e = {{exp}}(x[k * VEC + c] - largest);
        sum = sum + e;
        if (!logarithmic) { x[k * VEC + c] = e; }
      }
    }
  }
  let total = team_sum(s.team, s.lane, sum);
  let log_total = {{log}}(total);
  let out_base = p.out_offset + s.row * p.width;
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      var v: Vector;
      for (var c = 0u; c < VEC; c++) {
        if (logarithmic) {
          v[c] = x[k * VEC + c] - largest - log_total;
        } else {
          v[c] = x[k * VEC + c] / total;
        }
      }
      store(out_base + vector_index(s, k), v);
    }
  }
}

// The gradient through softmax, dx = y * (dy - sum(dy * y)), or through log-softmax where
// `logarithmic`, dx = dy - exp(y) * sum(dy); y is the forward's output.
fn backward(group: vec3<u32>, groups: vec3<u32>, local_index: u32, logarithmic: bool) {
  let s = seat_of(group, groups, local_index);
  var y: Held;
  var dy: Held;
  load_rows(s, p.input_offset + s.row * p.width, p.grad_offset + s.row * p.width, &y, &dy);
  // Entries past the row stay 0 (function variables start zeroed), adding nothing.
  var fold = {{acc}}(0);
  for (var e = 0u; e < HELD * VEC; e++) { fold = fold + select(dy[e] * y[e], dy[e], logarithmic); }
  fold = team_sum(s.team, s.lane, fold);
  let out_base = p.out_offset + s.row * p.width;
  for (var k = 0u; k < HELD; k++) {
    if (holds(s, k)) {
      var v: Vector;
      for (var c = 0u; c < VEC; c++) {
        let e = k * VEC + c;
        if (logarithmic) {
          v[c] = dy[e] - {{exp}}(y[e]) * fold;
        } else {
          v[c] = y[e] * (dy[e] - fold);
        }
      }
      store(out_base + vector_index(s, k), v);
    }
  }
}

@compute @workgroup_size({{workgroup_size}})
fn softmax(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
           @builtin(local_invocation_index) local_index: u32) {
  forward(group, groups, local_index, false);
}

@compute @workgroup_size({{workgroup_size}})
fn log_softmax(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) local_index: u32) {
  forward(group, groups, local_index, true);
}

@compute @workgroup_size({{workgroup_size}})
fn softmax_backward(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                    @builtin(local_invocation_index) local_index: u32) {
  backward(group, groups, local_index, false);
}

@compute @workgroup_size({{workgroup_size}})
fn log_softmax_backward(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                        @builtin(local_invocation_index) local_index: u32) {
  backward(group, groups, local_index, true);
}
