// Batch normalisation backward, the per-channel half: one workgroup per channel of an
// (outer, channels, inner) input sums grad and (x - mean) * grad over the channel, giving
// grad_bias = sum(grad) and grad_weight = invstd * sum((x - mean) * grad), and writes the
// coefficients batch_norm_apply.wgsl turns into grad_input (4 {{acc}} per channel:
// mean, k, mean grad, invstd * weight, with grad_input = (grad - mean grad - (x - mean) * k) * invstd * weight
// in training, as PyTorch's CPU kernel computes it, and grad * invstd * weight in evaluation).
// Training takes the saved mean / invstd, evaluation the running mean / var.
//! include lib/grid.wgsl
//! include lib/channel_reduce.wgsl

struct Params {
  channels: u32,
  inner: u32,
  count: u32,          // elements per channel: outer * inner
  x_offset: u32,
  grad_offset: u32,
  mean_offset: u32,
  spread_offset: u32,
  weight_offset: u32,
  grad_weight_offset: u32,
  grad_bias_offset: u32,
  coef_offset: u32,
  eps: vec2<u32>,      // the {{acc}} value's bits (float32: the first word)
}

@group(0) @binding(0) var<storage, read_write> x: array<{{x_array}}>;
@group(0) @binding(1) var<storage, read_write> grad: array<{{x_array}}>;
@group(0) @binding(2) var<storage, read_write> mean_in: array<{{stat_array}}>;   // save_mean or running_mean
@group(0) @binding(3) var<storage, read_write> spread_in: array<{{stat_array}}>; // save_invstd or running_var
@group(0) @binding(4) var<storage, read_write> weight: array<{{param_array}}>;
@group(0) @binding(5) var<storage, read_write> grad_weight: array<{{acc}}>;
@group(0) @binding(6) var<storage, read_write> grad_bias: array<{{acc}}>;
@group(0) @binding(7) var<storage, read_write> coef: array<{{acc}}>;
@group(0) @binding(8) var<uniform> p: Params;

const TRAINING: bool = {{training}};

fn x_at(i: u32) -> {{acc}} { return {{acc}}({{load_x}}); }
fn grad_at(i: u32) -> {{acc}} { return {{acc}}({{load_grad}}); }
fn mean_at(c: u32) -> {{acc}} { return {{acc}}({{load_mean}}); }
fn spread_at(c: u32) -> {{acc}} { return {{acc}}({{load_spread}}); }
fn weight_at(c: u32) -> {{acc}} { return {{acc}}({{load_weight}}); }
fn scalar(bits: vec2<u32>) -> {{acc}} { return {{decode_scalar}}; }

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let c = flat_group(group, groups);
  if (c >= p.channels) { return; }
  let mean = mean_at(p.mean_offset + c);
  var invstd: {{acc}};
  if (TRAINING) {
    invstd = spread_at(p.spread_offset + c);
  } else {
    invstd = {{acc}}(1) / sqrt(spread_at(p.spread_offset + c) + scalar(p.eps));
  }
  var grad_sum = {{acc}}(0);
  var dot = {{acc}}(0);
  for (var j = lane; j < p.count; j += {{workgroup_size}}u) {
    let e = channel_element(c, j, p.channels, p.inner);
    let g = grad_at(p.grad_offset + e);
    grad_sum += g;
    dot += (x_at(p.x_offset + e) - mean) * g;
  }
  grad_sum = workgroup_sum(lane, grad_sum);
  dot = workgroup_sum(lane, dot);
  if (lane != 0u) { return; }
  grad_weight[p.grad_weight_offset + c] = dot * invstd;
  grad_bias[p.grad_bias_offset + c] = grad_sum;
  let n = {{acc}}(p.count);
  let k = p.coef_offset + c * 4u;
  coef[k] = mean;
  coef[k + 1u] = select({{acc}}(0), dot * invstd * invstd / n, TRAINING);
  coef[k + 2u] = select({{acc}}(0), grad_sum / n, TRAINING);
  coef[k + 3u] = invstd * weight_at(c);
}
