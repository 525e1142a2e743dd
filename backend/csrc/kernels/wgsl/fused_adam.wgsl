// One Adam or AdamW step (_fused_adam_, _fused_adamw_) over several parameter tensors per dispatch,
// each a slot (lib/tensor_slots.wgsl): param, exp_avg, exp_avg_sq and, with amsgrad, max_exp_avg_sq
// read and written in one pass, and the gradient unscaled in place when a GradScaler's scale is given.
// One thread per u32 word (lib/optimizer_lanes.wgsl),
// float32 arithmetic whatever the stored dtype. The step count, a tensor lr, the scale and found_inf
// are read here, so the host never waits for them. The order of operations is the CPU's fused kernel's:
// the lerp of exp_avg picks its form by the weight as ATen's lerp does, and the update is
// param - step_size * exp_avg / (sqrt(v) / sqrt(1 - beta2^t) + eps).
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl
//! include lib/optimizer_lanes.wgsl
//! include lib/tensor_slots.wgsl

struct Params {
  slots: u32,                     // parameter tensors in this launch
  scalars_offset: u32,
  lr_index: u32,                  // in scalars, with LR_TENSOR
  scale_index: u32,               // with SCALE
  found_inf_index: u32,           // with FOUND_INF
  lr: f32,
  beta1: f32,
  beta2: f32,
  one_minus_beta1: f32,           // the lerp weight of exp_avg, rounded once from double
  one_minus_beta2: f32,
  weight_decay: f32,
  decay: f32,                     // AdamW's 1 - lr * weight_decay for p.lr, rounded once from double
  eps: f32,
  // per slot: first workgroup, elements, first word of max_exp_avg_sq (with amsgrad), of the step
  // count (float32, already incremented)
  slot: array<vec4<u32>, 32>,
  offsets: array<vec4<u32>, 32>,  // per slot: first word of param, grad, exp_avg, exp_avg_sq
}

{{bindings}}
@group(0) @binding({{scalars_binding}}) var<storage, read_write> scalars: array<f32>;
@group(0) @binding({{params_binding}}) var<uniform> p: Params;

{{accessors}}

const AMSGRAD: bool = {{amsgrad}};
const ADAMW: bool = {{adamw}}; // weight decay on the parameter instead of the gradient

fn is_nan(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7FFFFFFFu) > 0x7F800000u;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) local: u32,
        @builtin(num_workgroups) groups: vec3<u32>) {
  let group = flat_group(wid, groups);
  let slot = slot_of(group);
  let info = p.slot[slot];
  let count = info.y;
  let w = slot_word(group, local, slot, {{workgroup_size}}u);
  if (w > (count - 1u) / LANES) { return; }
  if (step_skipped()) { return; }
  let at = p.offsets[slot] + vec4<u32>(w);

  // Step counts are whole numbers (torch.optim keeps them in float32 and adds 1 per step).
  let t = u32(bitcast<f32>(load_step(slot, info.w)));
  let bias_correction1 = one_minus_power(p.beta1, p.one_minus_beta1, t);
  let bias_correction2_sqrt = sqrt(one_minus_power(p.beta2, p.one_minus_beta2, t));
  let lr = learning_rate();
  var decay = p.decay;
  if (LR_TENSOR) { decay = 1.0f - lr * p.weight_decay; }
  let step_size = lr / bias_correction1;
  let scale = grad_scale();

  var param_word = load_param(slot, at.x);
  var grad_word = load_grad(slot, at.y);
  var exp_avg_word = load_exp_avg(slot, at.z);
  var exp_avg_sq_word = load_exp_avg_sq(slot, at.w);
  var max_word = 0u;
  if (AMSGRAD) { max_word = load_max_exp_avg_sq(slot, info.z + w); }

  for (var lane = 0u; lane < LANES; lane++) {
    if (w * LANES + lane >= count) { break; }
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

  store_param(slot, at.x, param_word);
  store_exp_avg(slot, at.z, exp_avg_word);
  store_exp_avg_sq(slot, at.w, exp_avg_sq_word);
  if (AMSGRAD) { store_max_exp_avg_sq(slot, info.z + w, max_word); }
  if (SCALE) { store_grad(slot, at.y, grad_word); }
}
