// Batch normalisation, the per-element half of forward and backward: each element applies its
// channel's coefficients (from batch_norm.wgsl or batch_norm_backward.wgsl; 4 {{acc}} per channel,
// channel = (e / inner) % channels over the dense memory order of out, x and grad, which share one
// layout: NCHW or channels_last). A thread takes 4 consecutive elements, dividing once for the first
// one's channel and stepping it for the rest, and writes them as whole words of out (out starts at a
// word boundary; the lane of a 16-bit word past the end is written as 0).
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  total: u32,      // elements
  threads: u32,    // ceil(total / 4)
  channels: u32,
  inner: u32,
  out_offset: u32, // words
  x_offset: u32,
  grad_offset: u32,
  coef_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<{{out_array}}>;
@group(0) @binding(1) var<storage, read_write> x: array<{{x_array}}>;
@group(0) @binding(2) var<storage, read_write> grad: array<{{x_array}}>;
@group(0) @binding(3) var<storage, read_write> coef: array<{{acc}}>;
@group(0) @binding(4) var<uniform> p: Params;

// 0: forward, (x - mean) * scale + bias; 1: backward in training; 2: backward in evaluation.
const STAGE: u32 = {{stage}}u;

fn x_at(i: u32) -> {{acc}} { return {{acc}}({{load_x}}); }
fn grad_at(i: u32) -> {{acc}} { return {{acc}}({{load_grad}}); }
// v as out stores it (a 2-byte value in the low half of a u32).
fn stored(v: {{acc}}) -> {{out_array}} { return {{stored}}; }

fn value(e: u32, channel: u32) -> {{acc}} {
  let k = p.coef_offset + channel * 4u;
  if (STAGE == 0u) { return (x_at(p.x_offset + e) - coef[k + 1u]) * coef[k] + coef[k + 2u]; }
  let g = grad_at(p.grad_offset + e);
  if (STAGE == 1u) {
    return (g - coef[k + 2u] - (x_at(p.x_offset + e) - coef[k]) * coef[k + 1u]) * coef[k + 3u];
  }
  return g * coef[k + 3u];
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.threads) { return; }
  let first = t * 4u;
  let row = first / p.inner;
  var offset = first - row * p.inner;
  var channel = row % p.channels;
  var v: array<{{acc}}, 4>;
  for (var i = 0u; i < 4u; i++) {
    if (first + i < p.total) { v[i] = value(first + i, channel); }
    offset += 1u;
    if (offset == p.inner) {
      offset = 0u;
      channel += 1u;
      if (channel == p.channels) { channel = 0u; }
    }
  }
{{store}}
}
