// The GRU cell's backward (_thnn_fused_gru_cell_backward) in one kernel, from the workspace
// [r, z, n, hx, hn]: grad_z = grad_hy * (hx - n) * (1 - z) * z, grad_n = grad_hy * (1 - z) * (1 - n^2),
// grad_r = grad_n * hn * (1 - r) * r; the input gates' gradient is [grad_r, grad_z, grad_n], the hidden
// gates' [grad_r, grad_z, grad_n * r], grad_hx = grad_hy * z. The bias gradients, those summed over the
// batch, are the caller's reductions.
//! include lib/grid.wgsl
//! include lib/rnn_cell.wgsl

@group(0) @binding(0) var<storage, read_write> grad_hy: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> workspace: array<{{element}}>;
@group(0) @binding(2) var<storage, read_write> grad_input_gates: array<real>;
@group(0) @binding(3) var<storage, read_write> grad_hidden_gates: array<real>;
@group(0) @binding(4) var<storage, read_write> grad_hx: array<real>;
@group(0) @binding(5) var<uniform> p: Params;

fn load_grad_hy(i: u32) -> real { return {{load_grad_hy}}; }
fn load_workspace(i: u32) -> real { return {{load_workspace}}; }

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let b = t / p.hidden;
  let j = t % p.hidden;
  let w = offset_of(1u);
  let r = load_workspace(w + gate_at(b, 5u, 0u, j));
  let z = load_workspace(w + gate_at(b, 5u, 1u, j));
  let n = load_workspace(w + gate_at(b, 5u, 2u, j));
  let h = load_workspace(w + gate_at(b, 5u, 3u, j));
  let hn = load_workspace(w + gate_at(b, 5u, 4u, j));
  let dh = load_grad_hy(offset_of(0u) + t);
  let grad_z = dh * (h - n) * (real(1) - z) * z;
  let grad_n = dh * (real(1) - z) * (real(1) - n * n);
  let grad_r = grad_n * hn * (real(1) - r) * r;
  let input = offset_of(2u);
  let hidden = offset_of(3u);
  grad_input_gates[input + gate_at(b, 3u, 0u, j)] = grad_r;
  grad_input_gates[input + gate_at(b, 3u, 1u, j)] = grad_z;
  grad_input_gates[input + gate_at(b, 3u, 2u, j)] = grad_n;
  grad_hidden_gates[hidden + gate_at(b, 3u, 0u, j)] = grad_r;
  grad_hidden_gates[hidden + gate_at(b, 3u, 1u, j)] = grad_z;
  grad_hidden_gates[hidden + gate_at(b, 3u, 2u, j)] = grad_n * r;
  grad_hx[offset_of(4u) + t] = dh * z;
}
