// One Adam or AdamW step (_fused_adam_, _fused_adamw_) over one parameter tensor: param, exp_avg,
// exp_avg_sq and, with amsgrad, max_exp_avg_sq read and written in one pass, and the gradient unscaled
// in place when a GradScaler's scale is given. One thread per u32 word (lib/optimizer_lanes.wgsl),
// float32 arithmetic whatever the stored dtype. The step count, a tensor lr, the scale and found_inf
// are read here, so the host never waits for them. The order of operations is the CPU's fused kernel's:
// the lerp of exp_avg picks its form by the weight as ATen's lerp does, and the update is
// param - step_size * exp_avg / (sqrt(v) / sqrt(1 - beta2^t) + eps).
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl
//! include lib/optimizer_lanes.wgsl

struct Params {
  count: u32,                 // elements of the parameter
  words: u32,                 // u32 words of it, one thread each
  param_offset: u32,          // first word of each operand within its window
  grad_offset: u32,
  exp_avg_offset: u32,
  exp_avg_sq_offset: u32,
  max_exp_avg_sq_offset: u32, // unused without amsgrad
  step_offset: u32,           // the parameter's step count (float32, already incremented)
  scalars_offset: u32,
  lr_index: u32,              // in scalars, with LR_TENSOR
  scale_index: u32,           // with SCALE
  found_inf_index: u32,       // with FOUND_INF
  lr: f32,
  beta1: f32,
  beta2: f32,
  one_minus_beta1: f32,       // the lerp weight of exp_avg, rounded once from double
  one_minus_beta2: f32,
  weight_decay: f32,
  decay: f32,                 // AdamW's 1 - lr * weight_decay for p.lr, rounded once from double
  eps: f32,
}

@group(0) @binding(0) var<storage, read_write> param: array<u32>;
@group(0) @binding(1) var<storage, read_write> grad: array<u32>;
@group(0) @binding(2) var<storage, read_write> exp_avg: array<u32>;
@group(0) @binding(3) var<storage, read_write> exp_avg_sq: array<u32>;
@group(0) @binding(4) var<storage, read_write> max_exp_avg_sq: array<u32>;
@group(0) @binding(5) var<storage, read_write> step_count: array<f32>;
@group(0) @binding(6) var<storage, read_write> scalars: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

const AMSGRAD: bool = {{amsgrad}};
const ADAMW: bool = {{adamw}}; // weight decay on the parameter instead of the gradient

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7FFFFFFFu) > 0x7F800000u;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let w = flat_thread(gid, groups, {{workgroup_size}}u);
  if (w >= p.words) { return; }
  if (step_skipped()) { return; }

  // Step counts are whole numbers (torch.optim keeps them in float32 and adds 1 per step).
  let t = u32(step_count[p.step_offset]);
  let bias_correction1 = one_minus_power(p.beta1, p.one_minus_beta1, t);
  let bias_correction2_sqrt = sqrt(one_minus_power(p.beta2, p.one_minus_beta2, t));
  let lr = learning_rate();
  var decay = p.decay;
  if (LR_TENSOR) { decay = 1.0f - lr * p.weight_decay; }
  let step_size = lr / bias_correction1;
  let scale = grad_scale();

  var param_word = param[p.param_offset + w];
  var grad_word = grad[p.grad_offset + w];
  var exp_avg_word = exp_avg[p.exp_avg_offset + w];
  var exp_avg_sq_word = exp_avg_sq[p.exp_avg_sq_offset + w];
  var max_word = 0u;
  if (AMSGRAD) { max_word = max_exp_avg_sq[p.max_exp_avg_sq_offset + w]; }

  for (var lane = 0u; lane < LANES; lane++) {
    if (w * LANES + lane >= p.count) { break; }
    var g = gradient(&grad_word, lane, scale);
    var x = lane_value(param_word, lane);
    if (WEIGHT_DECAY) {
      if (ADAMW) {
        x = x * decay;
      } else {
        g = g + x * p.weight_decay;
      }
    }
    let m0 = lane_value(exp_avg_word, lane);
    var m: f32;
    if (p.one_minus_beta1 < 0.5f) {
      m = m0 + p.one_minus_beta1 * (g - m0);
    } else {
      m = g - (g - m0) * (1.0f - p.one_minus_beta1);
    }
    let v = lane_value(exp_avg_sq_word, lane) * p.beta2 + p.one_minus_beta2 * g * g;
    exp_avg_word = with_lane(exp_avg_word, lane, m);
    exp_avg_sq_word = with_lane(exp_avg_sq_word, lane, v);
    var second = v;
    if (AMSGRAD) {
      // torch.maximum: a NaN on either side is kept.
      let old = lane_value(max_word, lane);
      if (is_nan(old) || (!is_nan(v) && old > v)) { second = old; }
      max_word = with_lane(max_word, lane, second);
    }
    let denominator = sqrt(second) / bias_correction2_sqrt + p.eps;
    x = x - step_size * m / denominator;
    param_word = with_lane(param_word, lane, x);
  }

  param[p.param_offset + w] = param_word;
  exp_avg[p.exp_avg_offset + w] = exp_avg_word;
  exp_avg_sq[p.exp_avg_sq_offset + w] = exp_avg_sq_word;
  if (AMSGRAD) { max_exp_avg_sq[p.max_exp_avg_sq_offset + w] = max_word; }
  if (SCALE) { grad[p.grad_offset + w] = grad_word; }
}
