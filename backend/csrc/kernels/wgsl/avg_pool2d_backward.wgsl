// avg_pool2d's and adaptive_avg_pool2d's backward as a gather, without atomics: one thread per input
// element adds, for every output whose window holds it, that output's gradient divided as the forward
// divided its sum (lib/avg_window.wgsl), in increasing (oh, ow): the CPU adds each output's share into
// its window's elements in that order, so float32 sums match it. The sum is kept in the computation
// type and rounded once.
//! include lib/grid.wgsl

const CHANNELS_FAST: bool = {{channels_fast}};
const ADAPTIVE: bool = {{adaptive}};
const COUNT_INCLUDE_PAD: bool = {{count_include_pad}};
const DIVISOR_OVERRIDE: i32 = {{divisor_override}};

//! include lib/pool_window.wgsl

@group(0) @binding(0) var<storage, read_write> image: array<{{real}}>;
@group(0) @binding(1) var<storage, read_write> pooled: array<{{element}}>;
@group(0) @binding(2) var<uniform> p: Params;

alias real = {{real}};

//! include lib/avg_window.wgsl

fn load(i: u32) -> real {
  return {{load}};
}

// The outputs along one axis whose windows may hold input position x: [first, end). avg_pool2d's are
// those starting in (x - kernel, x] (its windows are never dilated); adaptive ones lie in
// [floor(x * out / extent), ceil((x + 1) * out / extent)), each tested against its window below.
fn sources(x: u32, out: u32, extent: u32, stride: u32, pad: u32, kernel: u32) -> vec2<u32> {
  if (ADAPTIVE) { return vec2<u32>((x * out) / extent, min(((x + 1u) * out + extent - 1u) / extent, out)); }
  var first = 0u;
  if (x + pad >= kernel) { first = (x + pad - kernel) / stride + 1u; }
  return vec2<u32>(first, min((x + pad) / stride + 1u, out));
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let at = grid_position(t, p.in_h, p.in_w);
  let rows = sources(at.z, p.out_h, p.in_h, p.stride_h, p.pad_h, p.kernel_h);
  let cols = sources(at.w, p.out_w, p.in_w, p.stride_w, p.pad_w, p.kernel_w);
  let y = i32(at.z);
  let x = i32(at.w);
  var sum = {{zero}};
  for (var oh = rows.x; oh < rows.y; oh++) {
    let h = window_h(oh);
    if (y < h.x || y >= h.y) { continue; }
    for (var ow = cols.x; ow < cols.y; ow++) {
      let w = window_w(ow);
      if (x < w.x || x >= w.y) { continue; }
      sum += averaged(load(p.pooled_offset + element_at(p.pooled, vec4<u32>(at.x, at.y, oh, ow))), h, w);
    }
  }
  image[p.image_offset + element_at(p.image, at)] = sum;
}
