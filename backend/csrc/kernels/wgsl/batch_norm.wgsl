// Batch normalisation, the per-channel half of the forward: one workgroup per channel of an
// (outer, channels, inner) input. Training: the channel's mean and biased variance (two passes over
// the data, the first shifted by the channel's first element, so a constant channel has mean exactly
// that value and variance exactly 0, the second corrected by its residual), saved as save_mean / save_invstd, and the running statistics
// updated in place (running_var with the unbiased variance, as PyTorch does). Evaluation: mean and
// variance are the running ones. Either way the channel's y = (x - mean) * scale + bias (scale = invstd *
// weight) is written to coef (4 {{acc}} per channel: scale, mean, bias), for batch_norm_apply.wgsl:
// centring first keeps a constant channel at exactly `bias`, fused multiply-add or not. Group
// normalisation runs the training statistics over a sample's group (a contiguous run of channels) and
// writes the coefficients of each of the group's channels.
//! include lib/grid.wgsl
//! include lib/channel_reduce.wgsl

struct Params {
  channels: u32,
  inner: u32,
  count: u32,               // elements per channel: outer * inner
  x_offset: u32,
  weight_offset: u32,
  bias_offset: u32,
  running_mean_offset: u32,
  running_var_offset: u32,
  save_mean_offset: u32,
  save_invstd_offset: u32,
  coef_offset: u32,
  // Group normalisation: each statistic (a sample's group) serves `group_channels` affine channels,
  // weight channel (statistic % groups) * group_channels + d; batch norm has 1 and groups = channels.
  group_channels: u32,
  groups: u32,
  eps: vec2<u32>,           // the {{acc}} value's bits (float32: the first word)
  momentum: vec2<u32>,
}

@group(0) @binding(0) var<storage, read_write> x: array<{{x_array}}>;
@group(0) @binding(1) var<storage, read_write> weight: array<{{param_array}}>;
@group(0) @binding(2) var<storage, read_write> bias: array<{{param_array}}>;
@group(0) @binding(3) var<storage, read_write> running_mean: array<{{acc}}>;
@group(0) @binding(4) var<storage, read_write> running_var: array<{{acc}}>;
@group(0) @binding(5) var<storage, read_write> save_mean: array<{{acc}}>;
@group(0) @binding(6) var<storage, read_write> save_invstd: array<{{acc}}>;
@group(0) @binding(7) var<storage, read_write> coef: array<{{acc}}>;
@group(0) @binding(8) var<uniform> p: Params;

const TRAINING: bool = {{training}};
const UPDATE_RUNNING: bool = {{update_running}};

fn x_at(i: u32) -> {{acc}} { return {{acc}}({{load_x}}); }
fn weight_at(c: u32) -> {{acc}} { return {{acc}}({{load_weight}}); }
fn bias_at(c: u32) -> {{acc}} { return {{acc}}({{load_bias}}); }
fn scalar(bits: vec2<u32>) -> {{acc}} { return {{decode_scalar}}; }

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let c = flat_group(group, groups);
  if (c >= p.channels) { return; }
  let eps = scalar(p.eps);
  var mean: {{acc}};
  var variance: {{acc}};
  if (TRAINING) {
    let n = {{acc}}(p.count);
    let first = x_at(p.x_offset + c * p.inner);
    var shifted = {{acc}}(0);
    for (var j = lane; j < p.count; j += {{workgroup_size}}u) {
      shifted += x_at(p.x_offset + channel_element(c, j, p.channels, p.inner)) - first;
    }
    // `first + shifted / n` rounds at the scale of `first`, far coarser than the mean's own when the
    // mean is small beside it; the second pass measures that error and takes it out of both moments
    // (the corrected two-pass algorithm of Chan, Golub and LeVeque).
    let estimate = first + workgroup_sum(lane, shifted) / n;
    var residual = {{acc}}(0);
    var squares = {{acc}}(0);
    for (var j = lane; j < p.count; j += {{workgroup_size}}u) {
      let d = x_at(p.x_offset + channel_element(c, j, p.channels, p.inner)) - estimate;
      residual += d;
      squares += d * d;
    }
    let error = workgroup_sum(lane, residual);
    mean = estimate + error / n;
    let m2 = max(workgroup_sum(lane, squares) - error * (error / n), {{acc}}(0));
    variance = m2 / n;
    if (UPDATE_RUNNING && lane == 0u) {
      // The host sends count == 1 (an unbiased variance of 0 / 0) to the CPU.
      let momentum = scalar(p.momentum);
      let keep = {{acc}}(1) - momentum;
      running_mean[p.running_mean_offset + c] = momentum * mean + keep * running_mean[p.running_mean_offset + c];
      running_var[p.running_var_offset + c] =
          momentum * (m2 / {{acc}}(p.count - 1u)) + keep * running_var[p.running_var_offset + c];
    }
  } else {
    mean = running_mean[p.running_mean_offset + c];
    variance = running_var[p.running_var_offset + c];
  }
  // PyTorch's InvStd: 0 for a zero variance with eps == 0 (the host sends evaluation with eps <= 0
  // to the CPU, whose evaluation path divides by zero there).
  var invstd = {{acc}}(0);
  if (variance != {{acc}}(0) || eps != {{acc}}(0)) { invstd = {{acc}}(1) / sqrt(variance + eps); }
  if (TRAINING && lane == 0u) {
    save_mean[p.save_mean_offset + c] = mean;
    save_invstd[p.save_invstd_offset + c] = invstd;
  }
  for (var d = lane; d < p.group_channels; d += {{workgroup_size}}u) {
    let affine = (c % p.groups) * p.group_channels + d;
    let k = p.coef_offset + (c * p.group_channels + d) * 4u;
    coef[k] = invstd * weight_at(affine);
    coef[k + 1u] = mean;
    coef[k + 2u] = bias_at(affine);
  }
}
