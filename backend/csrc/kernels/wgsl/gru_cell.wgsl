// The GRU cell's forward (_thnn_fused_gru_cell) in one kernel: with the input and hidden gates (biases
// added) [r, z, n], r = sigmoid(in_r + hidden_r), z = sigmoid(in_z + hidden_z), n = tanh(in_n + r * hn)
// where hn = hidden_n, hy = n + z * (hx - n); the workspace [r, z, n, hx, hn] is what the backward
// reads. Without biases their binding holds a stand-in that is never read.
//! include lib/grid.wgsl
//! include lib/rnn_cell.wgsl

@group(0) @binding(0) var<storage, read_write> input_gates: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> hidden_gates: array<{{element}}>;
@group(0) @binding(2) var<storage, read_write> hx: array<{{element}}>;
@group(0) @binding(3) var<storage, read_write> input_bias: array<{{element}}>;
@group(0) @binding(4) var<storage, read_write> hidden_bias: array<{{element}}>;
@group(0) @binding(5) var<storage, read_write> hy: array<real>;
@group(0) @binding(6) var<storage, read_write> workspace: array<real>;
@group(0) @binding(7) var<uniform> p: Params;

const HAS_BIAS: bool = {{has_bias}};

fn load_input_gates(i: u32) -> real { return {{load_input_gates}}; }
fn load_hidden_gates(i: u32) -> real { return {{load_hidden_gates}}; }
fn load_hx(i: u32) -> real { return {{load_hx}}; }
fn load_input_bias(i: u32) -> real { return {{load_input_bias}}; }
fn load_hidden_bias(i: u32) -> real { return {{load_hidden_bias}}; }

fn input_gate(b: u32, k: u32, j: u32) -> real {
  var v = load_input_gates(offset_of(0u) + gate_at(b, 3u, k, j));
  if (HAS_BIAS) { v += load_input_bias(offset_of(3u) + k * p.hidden + j); }
  return v;
}

fn hidden_gate(b: u32, k: u32, j: u32) -> real {
  var v = load_hidden_gates(offset_of(1u) + gate_at(b, 3u, k, j));
  if (HAS_BIAS) { v += load_hidden_bias(offset_of(4u) + k * p.hidden + j); }
  return v;
}

{{helpers}}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let b = t / p.hidden;
  let j = t % p.hidden;
  let r = sigmoid_(input_gate(b, 0u, j) + hidden_gate(b, 0u, j));
  let z = sigmoid_(input_gate(b, 1u, j) + hidden_gate(b, 1u, j));
  let hn = hidden_gate(b, 2u, j);
  let n = tanh_(input_gate(b, 2u, j) + r * hn);
  let h = load_hx(offset_of(2u) + t);
  hy[offset_of(5u) + t] = n + z * (h - n);
  let w = offset_of(6u);
  workspace[w + gate_at(b, 5u, 0u, j)] = r;
  workspace[w + gate_at(b, 5u, 1u, j)] = z;
  workspace[w + gate_at(b, 5u, 2u, j)] = n;
  workspace[w + gate_at(b, 5u, 3u, j)] = h;
  workspace[w + gate_at(b, 5u, 4u, j)] = hn;
}
