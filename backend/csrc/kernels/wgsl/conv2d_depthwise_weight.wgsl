// grad_weight of a depthwise conv2d (groups == input channels; output channel o reads input channel
// o / multiplier): weight[o, 0, kh, kw] = sum over (n, oh, ow) of grad_output[n, o, oh, ow] *
// input[n, o / multiplier, oh * stride - pad + kh * dilation, ...]. As a GEMM per group this is a
// (multiplier x taps) output over K = N * OH * OW, a 64x64 tile of which a handful of elements are
// used; here one workgroup reduces the pixels of one slice of K for one output channel and TILE of its
// taps, so each grad_output load feeds TILE products and nothing is padding.
// Thread `lane` walks the slice's pixels lane, lane + WORKGROUP, ... in order, then the per-thread
// sums of all TILE taps fold together through one fixed tree (lane i takes lane i + stride, as
// lib/workgroup_reduce.wgsl's does): the same bits every run, on every adapter, whatever its subgroup
// size. A fold per tap, as that library's, cost a barrier per halving per tap: with 25 taps, most of
// a short slice's time on lavapipe. No slice is deeper than 32768 pixels (conv_parts.h
// says why); with several slices each writes its partial sums [slice][o][kh][kw] and
// gemm_split_sum.wgsl adds them in slice order. Operands are read through their strides (NCHW,
// channels_last or any view); writes float32.
// CHANNELS > 1 (channels_last, where a pixel's channels are adjacent in memory): a workgroup takes
// CHANNELS consecutive output channels, lane = pixel lane * CHANNELS + channel, so that neighbouring
// threads load neighbouring channels of one pixel, and the tree folds only across pixel lanes.
//! include lib/grid.wgsl

struct Params {
  pixels: u32,       // N * OH * OW: the reduction per (o, tap)
  depth: u32,        // pixels per slice
  slices: u32,
  tiles: u32,        // tap tiles per output channel
  workgroups: u32,   // channel blocks * tiles * slices
  out_channels: u32,
  taps: u32,         // kernel_h * kernel_w
  multiplier: u32,   // output channels per input channel
  out_h: u32,
  out_w: u32,
  in_h: u32,
  in_w: u32,
  kernel_w: u32,
  stride_h: u32,
  stride_w: u32,
  pad_h: u32,
  pad_w: u32,
  dilation_h: u32,
  dilation_w: u32,
  input: vec4<u32>,  // strides (n, c, h, w) of `input`
  grad: vec4<u32>,   // strides (n, o, oh, ow) of `grad_output`
  dst: vec4<u32>,    // strides (o, kh, kw, slice) of `out`: the weight itself, or the partials
  input_offset: u32,
  grad_offset: u32,
  out_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> input: array<u32>;
@group(0) @binding(2) var<storage, read_write> grad_output: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

// Taps per workgroup: a constant, so that the per-thread sums can stay in registers.
const TILE: u32 = {{tile}}u;
const WORKGROUP: u32 = {{workgroup_size}}u; // a power of two
const LOG_WORKGROUP: u32 = {{log_workgroup_size}}u;
const CHANNELS: u32 = {{channels}}u; // output channels per workgroup, a power of two
const LOG_CHANNELS: u32 = {{log_channels}}u;
const PIXEL_LANES: u32 = WORKGROUP / CHANNELS;

// sums[t * WORKGROUP + lane]: each thread's sum of tap t (of its channel).
var<workgroup> sums: array<f32, TILE * WORKGROUP>;

fn load_input(i: u32) -> f32 {
  return {{load_input}};
}

fn load_grad(i: u32) -> f32 {
  return {{load_grad}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let w = flat_group(wg, groups);
  if (w >= p.workgroups) { return; }
  let slice = w % p.slices;
  let tile = (w / p.slices) % p.tiles;
  let block = w / (p.slices * p.tiles);
  let o = block * CHANNELS + lane % CHANNELS;
  let first = tile * TILE;
  let kh0 = first / p.kernel_w;
  let kw0 = first % p.kernel_w;
  let begin = slice * p.depth;
  let end = min(p.pixels, begin + p.depth);
  let plane_c = (o / p.multiplier) * p.input.y;
  var acc: array<f32, TILE>;
  // Beyond the last channel a thread still takes part in the fold, with zeros.
  let last = select(begin, end, o < p.out_channels);
  for (var i = begin + lane / CHANNELS; i < last; i += PIXEL_LANES) {
    let ow = i % p.out_w;
    let rest = i / p.out_w;
    let oh = rest % p.out_h;
    let n = rest / p.out_h;
    let g = load_grad(p.grad_offset + n * p.grad.x + o * p.grad.y + oh * p.grad.z + ow * p.grad.w);
    let plane = p.input_offset + n * p.input.x + plane_c;
    let h0 = i32(oh * p.stride_h) - i32(p.pad_h);
    let w0 = i32(ow * p.stride_w) - i32(p.pad_w);
    var kh = kh0;
    var kw = kw0;
    for (var t = 0u; t < TILE; t++) {
      let h = h0 + i32(kh * p.dilation_h);
      let x = w0 + i32(kw * p.dilation_w);
      if (first + t < p.taps && h >= 0 && u32(h) < p.in_h && x >= 0 && u32(x) < p.in_w) {
        acc[t] += g * load_input(plane + u32(h) * p.input.z + u32(x) * p.input.w);
      }
      kw++;
      if (kw == p.kernel_w) {
        kw = 0u;
        kh++;
      }
    }
  }
  for (var t = 0u; t < TILE; t++) { sums[t * WORKGROUP + lane] = acc[t]; }
  workgroupBarrier();
  // Each halving folds pixel lane i + stride into lane i, for every tap and channel: TILE * stride *
  // CHANNELS additions shared among all the threads (which thread does one changes no value).
  for (var shift = LOG_WORKGROUP; shift > LOG_CHANNELS; shift--) {
    let span = 1u << (shift - 1u); // stride * CHANNELS
    for (var j = lane; j < TILE << (shift - 1u); j += WORKGROUP) {
      let at = (j >> (shift - 1u)) * WORKGROUP + (j & (span - 1u));
      sums[at] = sums[at] + sums[at + span];
    }
    workgroupBarrier();
  }
  for (var j = lane; j < TILE * CHANNELS; j += WORKGROUP) {
    let tap = first + j / CHANNELS;
    let channel = block * CHANNELS + j % CHANNELS;
    if (tap < p.taps && channel < p.out_channels) {
      out[p.out_offset + channel * p.dst.x + (tap / p.kernel_w) * p.dst.y + (tap % p.kernel_w) * p.dst.z +
          slice * p.dst.w] = sums[(j / CHANNELS) * WORKGROUP + j % CHANNELS];
    }
  }
}
