// Random numbers from Philox 4x32-10, counter-based: thread t of a call draws the counter
// (t, 0, offset) under the key `seed`, so values depend only on (seed, offset, position), whatever the
// launch shape or the pieces a large call is split into. Each thread fills four consecutive float32 elements. One entry point per distribution;
// the ones without a mask and an input bind `out` in their places (the layout is shared).
// Only u32 multiplies: the high half of a 32x32 product is rebuilt from 16-bit halves, so no adapter
// needs 64-bit integers. log/sin/cos in `fill_normal` are the adapter's builtins: their last-ulp
// differences change samples, not the distribution.
//! include lib/grid.wgsl

struct Params {
  count: u32,        // elements
  out_offset: u32,
  mask_offset: u32,  // dropout's keep-mask (int32)
  input_offset: u32, // dropout's input
  key: vec4<u32>,    // seed lo, seed hi, offset lo, offset hi
  scalars: vec4<f32>, // uniform [a, b); normal mean a, std b; bernoulli p = a; dropout keep a, scale b
  first_thread: u32,  // the call's thread of this launch's thread 0 (a call too large for one binding runs in pieces)
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> mask: array<i32>;
@group(0) @binding(2) var<storage, read_write> input: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

fn mulhi(a: u32, b: u32) -> u32 {
  let al = a & 0xFFFFu;
  let ah = a >> 16u;
  let bl = b & 0xFFFFu;
  let bh = b >> 16u;
  let cross = ((al * bl) >> 16u) + ((ah * bl) & 0xFFFFu) + al * bh;
  return ah * bh + ((ah * bl) >> 16u) + (cross >> 16u);
}

fn philox(counter: vec4<u32>, seed: vec2<u32>) -> vec4<u32> {
  var c = counter;
  var k = seed;
  for (var round = 0u; round < 10u; round++) {
    let lo0 = 0xD2511F53u * c.x;
    let hi0 = mulhi(0xD2511F53u, c.x);
    let lo1 = 0xCD9E8D57u * c.z;
    let hi1 = mulhi(0xCD9E8D57u, c.z);
    c = vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// 24 random bits: exactly representable, uniform on [0, 1).
fn unit(x: u32) -> f32 {
  return f32(x >> 8u) * 5.9604644775390625e-8f;
}

fn bits_for(t: u32) -> vec4<u32> {
  return philox(vec4<u32>(p.first_thread + t, 0u, p.key.z, p.key.w), p.key.xy);
}

fn store4(first: u32, values: array<f32, 4>) {
  for (var j = 0u; j < 4u; j++) {
    if (first + j < p.count) { out[p.out_offset + first + j] = values[j]; }
  }
}

fn x_at(i: u32) -> f32 {
  return {{load_input}};
}

@compute @workgroup_size({{workgroup_size}})
fn fill_uniform(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t * 4u >= p.count) { return; }
  let bits = bits_for(t);
  var values: array<f32, 4>;
  for (var j = 0u; j < 4u; j++) { values[j] = p.scalars.x + (p.scalars.y - p.scalars.x) * unit(bits[j]); }
  store4(t * 4u, values);
}

// Box-Muller on two pairs; u1 in (0, 1] keeps the logarithm finite.
@compute @workgroup_size({{workgroup_size}})
fn fill_normal(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t * 4u >= p.count) { return; }
  let bits = bits_for(t);
  var values: array<f32, 4>;
  for (var j = 0u; j < 4u; j += 2u) {
    let u1 = 1.0f - unit(bits[j]);
    let u2 = unit(bits[j + 1u]);
    let r = sqrt(-2.0f * log(u1));
    let theta = 6.283185307179586f * u2;
    values[j] = p.scalars.x + p.scalars.y * r * cos(theta);
    values[j + 1u] = p.scalars.x + p.scalars.y * r * sin(theta);
  }
  store4(t * 4u, values);
}

@compute @workgroup_size({{workgroup_size}})
fn fill_bernoulli(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t * 4u >= p.count) { return; }
  let bits = bits_for(t);
  var values: array<f32, 4>;
  for (var j = 0u; j < 4u; j++) { values[j] = select(0.0f, 1.0f, unit(bits[j]) < p.scalars.x); }
  store4(t * 4u, values);
}

// out = keep ? x * scale : 0, and the keep-mask.
@compute @workgroup_size({{workgroup_size}})
fn dropout(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  let first = t * 4u;
  if (first >= p.count) { return; }
  let bits = bits_for(t);
  for (var j = 0u; j < 4u; j++) {
    let i = first + j;
    if (i < p.count) {
      let keep = unit(bits[j]) < p.scalars.x;
      mask[p.mask_offset + i] = select(0i, 1i, keep);
      out[p.out_offset + i] = select(0.0f, x_at(p.input_offset + i) * p.scalars.y, keep);
    }
  }
}
