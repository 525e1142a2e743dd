// The LSTM cell's backward (_thnn_fused_lstm_cell_backward_impl) in one kernel, from the activated gates
// [i, f, g, o] the forward saved: grad_c = grad_cy + grad_hy * o * (1 - tanh(cy)^2),
// grad_o = grad_hy * tanh(cy) * o * (1 - o), grad_i = grad_c * g * i * (1 - i),
// grad_f = grad_c * cx * f * (1 - f), grad_g = grad_c * i * (1 - g^2), grad_cx = grad_c * f. A missing
// grad_hy or grad_cy counts as zeros (its binding holds a stand-in that is never read). The bias
// gradient, the gate gradients summed over the batch, is the caller's reduction.
//! include lib/grid.wgsl
//! include lib/rnn_cell.wgsl

@group(0) @binding(0) var<storage, read_write> grad_hy: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> grad_cy: array<{{element}}>;
@group(0) @binding(2) var<storage, read_write> cx: array<{{element}}>;
@group(0) @binding(3) var<storage, read_write> cy: array<{{element}}>;
@group(0) @binding(4) var<storage, read_write> workspace: array<{{element}}>;
@group(0) @binding(5) var<storage, read_write> grad_gates: array<real>;
@group(0) @binding(6) var<storage, read_write> grad_cx: array<real>;
@group(0) @binding(7) var<uniform> p: Params;

const HAS_GRAD_HY: bool = {{has_grad_hy}};
const HAS_GRAD_CY: bool = {{has_grad_cy}};

fn load_grad_hy(i: u32) -> real { return {{load_grad_hy}}; }
fn load_grad_cy(i: u32) -> real { return {{load_grad_cy}}; }
fn load_cx(i: u32) -> real { return {{load_cx}}; }
fn load_cy(i: u32) -> real { return {{load_cy}}; }
fn load_workspace(i: u32) -> real { return {{load_workspace}}; }

{{helpers}}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let b = t / p.hidden;
  let j = t % p.hidden;
  let w = offset_of(4u);
  let i = load_workspace(w + gate_at(b, 4u, 0u, j));
  let f = load_workspace(w + gate_at(b, 4u, 1u, j));
  let g = load_workspace(w + gate_at(b, 4u, 2u, j));
  let o = load_workspace(w + gate_at(b, 4u, 3u, j));
  let tanh_cy = tanh_(load_cy(offset_of(3u) + t));
  var grad_c = real(0);
  if (HAS_GRAD_CY) { grad_c = load_grad_cy(offset_of(1u) + t); }
  var grad_o = real(0);
  if (HAS_GRAD_HY) {
    let dh = load_grad_hy(offset_of(0u) + t);
    grad_c = grad_c + dh * o * (real(1) - tanh_cy * tanh_cy);
    grad_o = dh * tanh_cy * o * (real(1) - o);
  }
  let out = offset_of(5u);
  grad_gates[out + gate_at(b, 4u, 0u, j)] = grad_c * g * i * (real(1) - i);
  grad_gates[out + gate_at(b, 4u, 1u, j)] = grad_c * load_cx(offset_of(2u) + t) * f * (real(1) - f);
  grad_gates[out + gate_at(b, 4u, 2u, j)] = grad_c * i * (real(1) - g * g);
  grad_gates[out + gate_at(b, 4u, 3u, j)] = grad_o;
  grad_cx[offset_of(6u) + t] = grad_c * f;
}
