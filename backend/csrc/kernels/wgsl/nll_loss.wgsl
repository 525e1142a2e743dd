// Negative log-likelihood over (N, C) log-probabilities with int64 class targets, read as (low, high)
// words so no adapter needs 64-bit integers: the per-sample losses, their sum or weighted mean folded
// by one workgroup (with the total weight, which the backward divides by), and the gradient's scatter
// into a zero-filled (N, C). The layout is shared by the entry points: an unweighted loss binds `input`
// in weight's place, the forward binds `out` in grad's and total's.
// With class weights, `loss - w * x` may be fused into one FMA by a driver: the mean is then a last-bit
// different sum on different adapters (within the tolerance any reordered sum needs); without weights
// w is 1 and the product is exact.
//! include lib/grid.wgsl
//! include lib/workgroup_reduce.wgsl

struct Params {
  samples: u32,
  classes: u32,
  reduction: u32,   // 0 none, 1 mean, 2 sum
  out_offset: u32,
  input_offset: u32,
  target_offset: u32,
  weight_offset: u32,
  grad_offset: u32,
  total_offset: u32,
  ignore_lo: u32,   // ignore_index's two words
  ignore_hi: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> input: array<u32>;
@group(0) @binding(2) var<storage, read_write> labels: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read_write> weight: array<u32>;
@group(0) @binding(4) var<storage, read_write> grad: array<f32>;
@group(0) @binding(5) var<storage, read_write> total: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

fn weight_of(c: u32) -> f32 {
  return {{weight_of}};
}

fn x_at(i: u32) -> f32 {
  return {{load_input}};
}

fn ignored(t: vec2<u32>) -> bool {
  return t.x == p.ignore_lo && t.y == p.ignore_hi;
}

@compute @workgroup_size({{workgroup_size}})
fn forward_none(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = flat_thread(gid, groups, {{workgroup_size}}u);
  if (i >= p.samples) { return; }
  let t = labels[p.target_offset + i];
  var loss = 0.0f;
  if (!ignored(t)) {
    let c = t.x;
    loss = -weight_of(c) * x_at(i * p.classes + c);
  }
  out[p.out_offset + i] = loss;
}

// One workgroup: out = [loss, total weight].
@compute @workgroup_size({{workgroup_size}})
fn forward_reduced(@builtin(local_invocation_index) lane: u32) {
  var loss = 0.0f;
  var weights = 0.0f;
  for (var i = lane; i < p.samples; i += {{workgroup_size}}u) {
    let t = labels[p.target_offset + i];
    if (!ignored(t)) {
      let c = t.x;
      let wc = weight_of(c);
      loss -= wc * x_at(i * p.classes + c);
      weights += wc;
    }
  }
  let loss_sum = workgroup_sum(lane, loss);
  let weight_sum = workgroup_sum(lane, weights);
  if (lane == 0u) {
    out[p.out_offset] = select(loss_sum, loss_sum / weight_sum, p.reduction == 1u);
    out[p.out_offset + 1u] = weight_sum;
  }
}

@compute @workgroup_size({{workgroup_size}})
fn backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = flat_thread(gid, groups, {{workgroup_size}}u);
  if (i >= p.samples) { return; }
  let t = labels[p.target_offset + i];
  if (ignored(t)) { return; }
  let c = t.x;
  var scale = grad[p.grad_offset];
  if (p.reduction == 0u) { scale = grad[p.grad_offset + i]; }
  if (p.reduction == 1u) { scale = scale / total[p.total_offset]; }
  out[p.out_offset + i * p.classes + c] = -weight_of(c) * scale;
}
