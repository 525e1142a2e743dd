// The LSTM cell's forward (_thnn_fused_lstm_cell) in one kernel: gates = (input_gates + input_bias) +
// (hidden_gates + hidden_bias), i, f, o = sigmoid, g = tanh, cy = f * cx + i * g, hy = o * tanh(cy);
// the activated gates [i, f, g, o] are the workspace the backward reads. Without biases their binding
// holds a stand-in that is never read.
//! include lib/grid.wgsl
//! include lib/rnn_cell.wgsl

@group(0) @binding(0) var<storage, read_write> input_gates: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> hidden_gates: array<{{element}}>;
@group(0) @binding(2) var<storage, read_write> cx: array<{{element}}>;
@group(0) @binding(3) var<storage, read_write> input_bias: array<{{element}}>;
@group(0) @binding(4) var<storage, read_write> hidden_bias: array<{{element}}>;
@group(0) @binding(5) var<storage, read_write> hy: array<real>;
@group(0) @binding(6) var<storage, read_write> cy: array<real>;
@group(0) @binding(7) var<storage, read_write> workspace: array<real>;
@group(0) @binding(8) var<uniform> p: Params;

const HAS_BIAS: bool = {{has_bias}};

fn load_input_gates(i: u32) -> real { return {{load_input_gates}}; }
fn load_hidden_gates(i: u32) -> real { return {{load_hidden_gates}}; }
fn load_cx(i: u32) -> real { return {{load_cx}}; }
fn load_input_bias(i: u32) -> real { return {{load_input_bias}}; }
fn load_hidden_bias(i: u32) -> real { return {{load_hidden_bias}}; }

fn gate(b: u32, k: u32, j: u32) -> real {
  let at = gate_at(b, 4u, k, j);
  var from_input = load_input_gates(offset_of(0u) + at);
  var from_hidden = load_hidden_gates(offset_of(1u) + at);
  if (HAS_BIAS) {
    from_input += load_input_bias(offset_of(3u) + k * p.hidden + j);
    from_hidden += load_hidden_bias(offset_of(4u) + k * p.hidden + j);
  }
  return from_input + from_hidden;
}

{{helpers}}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let b = t / p.hidden;
  let j = t % p.hidden;
  let i = sigmoid_(gate(b, 0u, j));
  let f = sigmoid_(gate(b, 1u, j));
  let g = tanh_(gate(b, 2u, j));
  let o = sigmoid_(gate(b, 3u, j));
  let c = f * load_cx(offset_of(2u) + t) + i * g;
  hy[offset_of(5u) + t] = o * tanh_(c);
  cy[offset_of(6u) + t] = c;
  let w = offset_of(7u);
  workspace[w + gate_at(b, 4u, 0u, j)] = i;
  workspace[w + gate_at(b, 4u, 1u, j)] = f;
  workspace[w + gate_at(b, 4u, 2u, j)] = g;
  workspace[w + gate_at(b, 4u, 3u, j)] = o;
}
