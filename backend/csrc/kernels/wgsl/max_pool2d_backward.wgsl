// max_pool2d's backward as a gather, without atomics: one thread per input element adds the gradient
// of every output whose saved index is this element. The outputs whose windows reach input row h are
// a range, [first_source, end_source) (CUDA's bounds), so a thread walks only those, in increasing
// (oh, ow): the order in which the CPU adds them into one element, so float32 sums match it bit for
// bit. The sum is kept in the computation type and rounded once (the CPU rounds a 16-bit sum at each
// add; CUDA does as here). An index that points outside its output's window adds nothing (the CPU
// would add it there).
//! include lib/grid.wgsl

const CHANNELS_FAST: bool = {{channels_fast}};

//! include lib/pool_window.wgsl

@group(0) @binding(0) var<storage, read_write> image: array<{{real}}>;
@group(0) @binding(1) var<storage, read_write> pooled: array<{{element}}>;
@group(0) @binding(2) var<storage, read_write> indices: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

alias real = {{real}};

fn load(i: u32) -> real {
  return {{load}};
}

// The first output along one axis whose window, `span` long from o * stride - pad, reaches x.
fn first_source(x: u32, pad: u32, span: u32, stride: u32) -> u32 {
  if (x + pad < span) { return 0u; }
  return (x + pad - span) / stride + 1u;
}

// One past the last output whose window starts at or before x.
fn end_source(x: u32, pad: u32, stride: u32, extent: u32) -> u32 {
  return min((x + pad) / stride + 1u, extent);
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let at = grid_position(t, p.in_h, p.in_w);
  let here = at.z * p.in_w + at.w;
  var sum = {{zero}};
  let h_end = end_source(at.z, p.pad_h, p.stride_h, p.out_h);
  let w_first = first_source(at.w, p.pad_w, (p.kernel_w - 1u) * p.dilation_w + 1u, p.stride_w);
  let w_end = end_source(at.w, p.pad_w, p.stride_w, p.out_w);
  for (var oh = first_source(at.z, p.pad_h, (p.kernel_h - 1u) * p.dilation_h + 1u, p.stride_h); oh < h_end; oh++) {
    for (var ow = w_first; ow < w_end; ow++) {
      let source = vec4<u32>(at.x, at.y, oh, ow);
      let word = p.index_offset + element_at(p.index, source);
      if (indices[word] == here && indices[word + 1u] == 0u) {
        sum += load(p.pooled_offset + element_at(p.pooled, source));
      }
    }
  }
  image[p.image_offset + element_at(p.image, at)] = sum;
}
