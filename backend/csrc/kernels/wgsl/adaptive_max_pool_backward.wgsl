// adaptive_max_pool2d's backward as a gather, without atomics: one thread per input element of an
// NCHW-contiguous gradient adds the gradients of the outputs whose windows hold it and whose saved
// index is it. Output row oh's window is [floor(oh H / OH), ceil((oh + 1) H / OH)), so the rows holding
// input row h are [floor(h OH / H), ceil((h + 1) OH / H)), walked in increasing (oh, ow): the CPU's
// order of addition, so float32 sums match it bit for bit. The sum is kept in the computation type
// and rounded once. Unsigned integer arithmetic throughout.
//! include lib/grid.wgsl
//! include lib/adaptive_pool_params.wgsl

@group(0) @binding(0) var<storage, read_write> grad: array<{{element}}>;
@group(0) @binding(1) var<storage, read_write> out: array<{{real}}>;
@group(0) @binding(2) var<storage, read_write> indices: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

alias real = {{real}};

fn load(i: u32) -> real {
  return {{load}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.count) { return; }
  let per_plane = p.in_h * p.in_w;
  let plane = t / per_plane;
  let here = t % per_plane;
  let h = here / p.in_w;
  let w = here % p.in_w;
  let h_end = ((h + 1u) * p.out_h + p.in_h - 1u) / p.in_h;
  let w_first = (w * p.out_w) / p.in_w;
  let w_end = ((w + 1u) * p.out_w + p.in_w - 1u) / p.in_w;
  let pooled = plane * p.out_h * p.out_w;
  var sum = {{zero}};
  for (var oh = (h * p.out_h) / p.in_h; oh < h_end; oh++) {
    for (var ow = w_first; ow < w_end; ow++) {
      let k = pooled + oh * p.out_w + ow;
      if (indices[p.index_offset + 2u * k] == here && indices[p.index_offset + 2u * k + 1u] == 0u) {
        sum += load(p.src_offset + k);
      }
    }
  }
  out[p.out_offset + t] = sum;
}
