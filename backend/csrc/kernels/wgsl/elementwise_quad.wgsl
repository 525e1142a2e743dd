// The elementwise family's dense path: every operand dense, of 1, 2 or 4 bytes, and aligned to four
// elements, so each thread moves four elements of every operand in one load (a vec4<u32>, vec2<u32>
// or u32) and computes no index: the path memory-bound ops need to reach a GPU's bandwidth. A packed
// output is written as whole words, which only this thread's elements occupy. Element offsets in
// p are multiples of 4 and p.numel counts groups of four.
//! include lib/grid.wgsl
//! include lib/elementwise_params.wgsl
//! include lib/quad_words.wgsl
//! include lib/elementwise_value.wgsl

@group(0) @binding(0) var<storage, read_write> dst: array<{{out_quad}}>;
@group(0) @binding({{a_binding}}) var<storage, read_write> in_a: array<{{a_quad}}>;
@group(0) @binding({{b_binding}}) var<storage, read_write> in_b: array<{{b_quad}}>;
@group(0) @binding({{c_binding}}) var<storage, read_write> in_c: array<{{c_quad}}>;
@group(0) @binding({{params_binding}}) var<uniform> p: Params;

const WORKGROUP_SIZE: u32 = {{workgroup_size}}u;

// Thread t's four elements of each input, as words (zeros for an input that binds nothing).
fn words_a(t: u32) -> array<u32, 4> {
  return {{words_a}};
}

fn words_b(t: u32) -> array<u32, 4> {
  return {{words_b}};
}

fn words_c(t: u32) -> array<u32, 4> {
  return {{words_c}};
}

// Element j of four, from their words, in the type value() takes.
fn lane_a(w: array<u32, 4>, j: u32) -> {{a_type}} {
  return {{lane_a}};
}

fn lane_b(w: array<u32, 4>, j: u32) -> {{b_type}} {
  return {{lane_b}};
}

fn lane_c(w: array<u32, 4>, j: u32) -> {{c_type}} {
  return {{lane_c}};
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, WORKGROUP_SIZE);
  if (t >= p.numel) { return; }
  let wa = words_a(t);
  let wb = words_b(t);
  let wc = words_c(t);
  let r0 = value(4u * t + 0u, lane_a(wa, 0u), lane_b(wb, 0u), lane_c(wc, 0u));
  let r1 = value(4u * t + 1u, lane_a(wa, 1u), lane_b(wb, 1u), lane_c(wc, 1u));
  let r2 = value(4u * t + 2u, lane_a(wa, 2u), lane_b(wb, 2u), lane_c(wc, 2u));
  let r3 = value(4u * t + 3u, lane_a(wa, 3u), lane_b(wb, 3u), lane_c(wc, 3u));
  dst[(p.out_offset >> 2u) + t] = {{pack}}(r0, r1, r2, r3);
}
