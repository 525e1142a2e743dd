// Depthwise conv2d forward (groups == input channels; output channel o reads input channel
// o / multiplier): one thread per output element walks its kernel_h x kernel_w taps directly. With
// one input channel per group an implicit GEMM's K is only the taps (9 or 25) and its columns the
// multiplier (usually 1), so its 64x64 tiles would be almost all padding; here every load feeds one
// FMA and neighbouring threads share their input rows through the cache. Threads run over the
// output in its memory order (channel fastest when CHANNELS_LAST), so stores and loads coalesce.
// Writes float32; the taps are summed in a fixed order (kh, then kw).
// BACKWARD: grad_input, one thread per input element gathering, for each of its channel's
// `multiplier` output channels, the taps whose output position ((i + pad - k * dilation) / stride)
// divides exactly; `input` is then grad_output and the thread walks the input's shape.
//! include lib/grid.wgsl

struct Params {
  count: u32,        // elements written
  channels: u32,     // channels written (output channels; BACKWARD: input channels)
  multiplier: u32,   // output channels per input channel
  out_h: u32,
  out_w: u32,
  in_h: u32,
  in_w: u32,
  kernel_h: u32,
  kernel_w: u32,
  stride_h: u32,
  stride_w: u32,
  pad_h: u32,
  pad_w: u32,
  dilation_h: u32,
  dilation_w: u32,
  input_offset: u32,
  input: vec4<u32>,  // strides (n, c, h, w) of `input` (BACKWARD: of grad_output)
  weight: vec4<u32>, // strides (o, 1, kh, kw)
  dst: vec4<u32>,    // strides of `out` (n, c, h, w)
  weight_offset: u32,
  out_offset: u32,
  bias_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> input: array<u32>;
@group(0) @binding(2) var<storage, read_write> weight: array<u32>;
@group(0) @binding(3) var<storage, read_write> bias: array<u32>; // `weight` again without a bias
@group(0) @binding(4) var<uniform> p: Params;

const CHANNELS_LAST: bool = {{channels_last}};
const WITH_BIAS: bool = {{with_bias}};
const BACKWARD: bool = {{backward}};

fn load_input(i: u32) -> f32 {
  return {{load_input}};
}

fn load_weight(i: u32) -> f32 {
  return {{load_weight}};
}

fn load_bias(i: u32) -> f32 {
  return {{load_bias}};
}

// (n, channel, y, x) of element t of a (channels, height, width) tensor, in its memory order.
fn element(t: u32, height: u32, width: u32) -> vec4<u32> {
  var c: u32;
  var x: u32;
  var rest: u32;
  if (CHANNELS_LAST) {
    c = t % p.channels;
    rest = t / p.channels;
    x = rest % width;
    rest = rest / width;
  } else {
    x = t % width;
    rest = t / width;
  }
  let y = rest % height;
  rest = rest / height;
  if (!CHANNELS_LAST) {
    c = rest % p.channels;
    rest = rest / p.channels;
  }
  return vec4<u32>(rest, c, y, x);
}

// Output position along one axis that tap k of input position i feeds, or -1 when none.
fn source(i: u32, k: u32, pad: u32, dilation: u32, stride: u32, size: u32) -> i32 {
  let t = i32(i + pad) - i32(k * dilation);
  // Non-negative before the unsigned division.
  if (t < 0 || u32(t) % stride != 0u || u32(t) / stride >= size) { return -1; }
  return i32(u32(t) / stride);
}

fn gathered(at: vec4<u32>) -> f32 {
  var acc = 0.0;
  for (var j = 0u; j < p.multiplier; j++) {
    let o = at.y * p.multiplier + j;
    let plane = p.input_offset + at.x * p.input.x + o * p.input.y;
    let taps = p.weight_offset + o * p.weight.x;
    for (var kh = 0u; kh < p.kernel_h; kh++) {
      let oh = source(at.z, kh, p.pad_h, p.dilation_h, p.stride_h, p.out_h);
      if (oh < 0) { continue; }
      for (var kw = 0u; kw < p.kernel_w; kw++) {
        let ow = source(at.w, kw, p.pad_w, p.dilation_w, p.stride_w, p.out_w);
        if (ow < 0) { continue; }
        acc += load_input(plane + u32(oh) * p.input.z + u32(ow) * p.input.w) *
            load_weight(taps + kh * p.weight.z + kw * p.weight.w);
      }
    }
  }
  return acc;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  var at: vec4<u32>;
  if (BACKWARD) { at = element(t, p.in_h, p.in_w); } else { at = element(t, p.out_h, p.out_w); }
  if (BACKWARD) {
    out[p.out_offset + at.x * p.dst.x + at.y * p.dst.y + at.z * p.dst.z + at.w * p.dst.w] = gathered(at);
    return;
  }
  let n = at.x;
  let o = at.y;
  let oh = at.z;
  let ow = at.w;
  let h0 = i32(oh * p.stride_h) - i32(p.pad_h);
  let w0 = i32(ow * p.stride_w) - i32(p.pad_w);
  let plane = p.input_offset + n * p.input.x + (o / p.multiplier) * p.input.y;
  let taps = p.weight_offset + o * p.weight.x;
  var acc = 0.0;
  for (var kh = 0u; kh < p.kernel_h; kh++) {
    let h = h0 + i32(kh * p.dilation_h);
    if (h < 0 || u32(h) >= p.in_h) { continue; }
    let row = plane + u32(h) * p.input.z;
    for (var kw = 0u; kw < p.kernel_w; kw++) {
      let w = w0 + i32(kw * p.dilation_w);
      if (w < 0 || u32(w) >= p.in_w) { continue; }
      acc += load_input(row + u32(w) * p.input.w) * load_weight(taps + kh * p.weight.z + kw * p.weight.w);
    }
  }
  if (WITH_BIAS) { acc += load_bias(p.bias_offset + o); }
  out[p.out_offset + n * p.dst.x + o * p.dst.y + oh * p.dst.z + ow * p.dst.w] = acc;
}
