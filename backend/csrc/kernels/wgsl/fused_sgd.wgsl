// One SGD step (_fused_sgd_) over one parameter tensor: param and the momentum buffer read and written
// in one pass, the gradient unscaled in place when a GradScaler's scale is given. One thread per u32
// word (lib/optimizer_lanes.wgsl), float32 arithmetic whatever the stored dtype; a tensor lr, the scale
// and found_inf are read here, so the host never waits for them. The order of operations is
// torch.optim.SGD's: g (+ weight_decay * param), buf = momentum * buf + (1 - dampening) * g (g itself on
// the first step), g = g + momentum * buf with nesterov or buf without, param - lr * g.
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl
//! include lib/optimizer_lanes.wgsl

struct Params {
  count: u32,            // elements of the parameter
  words: u32,            // u32 words of it, one thread each
  param_offset: u32,     // first word of each operand within its window
  grad_offset: u32,
  buffer_offset: u32,    // unused without momentum
  scalars_offset: u32,
  lr_index: u32,         // in scalars, with LR_TENSOR
  scale_index: u32,      // with SCALE
  found_inf_index: u32,  // with FOUND_INF
  lr: f32,
  weight_decay: f32,
  momentum: f32,
  one_minus_dampening: f32,
}

@group(0) @binding(0) var<storage, read_write> param: array<u32>;
@group(0) @binding(1) var<storage, read_write> grad: array<u32>;
@group(0) @binding(2) var<storage, read_write> momentum_buffer: array<u32>;
@group(0) @binding(3) var<storage, read_write> scalars: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

const MOMENTUM: bool = {{momentum}};     // momentum != 0: a buffer is kept
const FIRST_STEP: bool = {{first_step}}; // the buffer starts as the gradient
const NESTEROV: bool = {{nesterov}};

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let w = flat_thread(gid, groups, {{workgroup_size}}u);
  if (w >= p.words) { return; }
  if (step_skipped()) { return; }
  let lr = learning_rate();
  let scale = grad_scale();

  var param_word = param[p.param_offset + w];
  var grad_word = grad[p.grad_offset + w];
  var buffer_word = 0u;
  if (MOMENTUM) { buffer_word = momentum_buffer[p.buffer_offset + w]; }

  for (var lane = 0u; lane < LANES; lane++) {
    if (w * LANES + lane >= p.count) { break; }
    var g = gradient(&grad_word, lane, scale);
    let x = lane_value(param_word, lane);
    if (WEIGHT_DECAY) { g = g + x * p.weight_decay; }
    if (MOMENTUM) {
      var b = g;
      if (!FIRST_STEP) { b = lane_value(buffer_word, lane) * p.momentum + g * p.one_minus_dampening; }
      buffer_word = with_lane(buffer_word, lane, b);
      if (NESTEROV) {
        g = g + p.momentum * b;
      } else {
        g = b;
      }
    }
    param_word = with_lane(param_word, lane, x - lr * g);
  }

  param[p.param_offset + w] = param_word;
  if (MOMENTUM) { momentum_buffer[p.buffer_offset + w] = buffer_word; }
  if (SCALE) { grad[p.grad_offset + w] = grad_word; }
}
