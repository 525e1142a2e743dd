// One SGD step (_fused_sgd_) over several parameter tensors per dispatch, each a slot
// (lib/tensor_slots.wgsl): param and the momentum buffer read and written in one pass, the gradient unscaled in place when a GradScaler's scale is given. One thread per u32
// word (lib/optimizer_lanes.wgsl), float32 arithmetic whatever the stored dtype; a tensor lr, the scale
// and found_inf are read here, so the host never waits for them. The order of operations is
// torch.optim.SGD's: g (+ weight_decay * param), buf = momentum * buf + (1 - dampening) * g (g itself on
// the first step), g = g + momentum * buf with nesterov or buf without, param - lr * g.
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
  weight_decay: f32,
  momentum: f32,
  one_minus_dampening: f32,
  slot: array<vec4<u32>, 32>,     // per slot: first workgroup, elements
  offsets: array<vec4<u32>, 32>,  // per slot: first word of param, grad, the momentum buffer
}

{{bindings}}
@group(0) @binding({{scalars_binding}}) var<storage, read_write> scalars: array<f32>;
@group(0) @binding({{params_binding}}) var<uniform> p: Params;

{{accessors}}

const MOMENTUM: bool = {{momentum}};     // momentum != 0: a buffer is kept
const FIRST_STEP: bool = {{first_step}}; // the buffer starts as the gradient
const NESTEROV: bool = {{nesterov}};

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) local: u32,
        @builtin(num_workgroups) groups: vec3<u32>) {
  let group = flat_group(wid, groups);
  let slot = slot_of(group);
  let count = p.slot[slot].y;
  let w = slot_word(group, local, slot, {{workgroup_size}}u);
  if (w > (count - 1u) / LANES) { return; }
  if (step_skipped()) { return; }
  let at = p.offsets[slot] + vec4<u32>(w);
  let lr = learning_rate();
  let scale = grad_scale();

  var param_word = load_param(slot, at.x);
  var grad_word = load_grad(slot, at.y);
  var buffer_word = 0u;
  if (MOMENTUM) { buffer_word = load_momentum_buffer(slot, at.z); }

  for (var lane = 0u; lane < LANES; lane++) {
    if (w * LANES + lane >= count) { break; }
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

  store_param(slot, at.x, param_word);
  if (MOMENTUM) { store_momentum_buffer(slot, at.z, buffer_word); }
  if (SCALE) { store_grad(slot, at.y, grad_word); }
}
