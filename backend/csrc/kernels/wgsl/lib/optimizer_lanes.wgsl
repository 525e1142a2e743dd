// The optimizer kernels' options and device scalars, over tensors held as lanes of u32 words
// (lib/word_lanes.wgsl). The group's device scalars (a tensor lr, GradScaler's scale and found_inf)
// arrive in one binding, `scalars`, each at an index of Params (the including family declares both).
//! include lib/word_lanes.wgsl

// The step's options, fixed per compiled variant: branching on them as uniforms made the SGD step 1.5x
// slower on lavapipe.
const MAXIMIZE: bool = {{maximize}};
const WEIGHT_DECAY: bool = {{weight_decay}}; // weight_decay != 0
const LR_TENSOR: bool = {{lr_tensor}};       // lr is scalars[p.lr_index], not p.lr
const SCALE: bool = {{scale}};               // gradients are divided by scalars[p.scale_index]
const FOUND_INF: bool = {{found_inf}};       // scalars[p.found_inf_index] == 1 skips the step

fn learning_rate() -> f32 {
  if (LR_TENSOR) { return scalars[p.scalars_offset + p.lr_index]; }
  return p.lr;
}

// GradScaler found an inf or NaN: the step changes nothing, its gradients stay scaled (as on the CPU).
fn step_skipped() -> bool {
  return FOUND_INF && scalars[p.scalars_offset + p.found_inf_index] == 1.0f;
}

fn grad_scale() -> f32 {
  if (SCALE) { return scalars[p.scalars_offset + p.scale_index]; }
  return 1.0f;
}

// The lane's gradient divided by GradScaler's scale (stored back unscaled, as torch.optim expects after
// a step), negated for maximize.
fn gradient(grad_word: ptr<function, u32>, lane: u32, scale: f32) -> f32 {
  var g = lane_value(*grad_word, lane);
  if (SCALE) {
    g = g / scale;
    *grad_word = with_lane(*grad_word, lane, g);
  }
  if (MAXIMIZE) { g = -g; }
  return g;
}

// 1 - beta^n, kept as the pair (x^k, 1 - x^k) while powering by squaring. 1 - x^(a+b) is
// (1 - x^a) + x^a (1 - x^b), a sum of non-negative terms for 0 <= beta <= 1, so the result keeps its
// relative precision where 1 - pow(beta, n) cancels: with beta2 = 0.999 the float32 difference is off
// by 1e-5 relative at n = 1, this by 5e-8. `one_minus_beta` comes from the host's double arithmetic for
// that reason. Its error grows with n as any float32 power's does (2e-5 at n = 10^4; the CPU computes
// the power in double, CUDA's fused kernel in float32).
fn one_minus_power(beta: f32, one_minus_beta: f32, n: u32) -> f32 {
  var square = beta;                  // x^(2^i)
  var square_rest = one_minus_beta;   // 1 - x^(2^i)
  var power = 1.0f;
  var rest = 0.0f;
  var k = n;
  loop {
    if (k == 0u) { break; }
    if ((k & 1u) != 0u) {
      rest = rest + power * square_rest;
      power = power * square;
    }
    square_rest = square_rest + square * square_rest;
    square = square * square;
    k = k >> 1u;
  }
  return rest;
}
