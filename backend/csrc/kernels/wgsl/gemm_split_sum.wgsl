// The second pass of a split-K GEMM (gemm.wgsl, gemm128.wgsl with p.split.x > 1): one thread per
// output element adds its slices' partial products in slice order (the same sum on every run and
// every adapter; no atomics), then applies the epilogue the one-pass kernels apply:
// out = alpha * sum [+ beta * addend], written in {{acc}} through out's strides. A variant without an
// addend binds `out` in its place.
//! include lib/grid.wgsl

struct Params {
  dims: vec4<u32>,     // m, n, slices, outputs in this dispatch (batches * m * n)
  partials: vec4<u32>, // offset, distance between slices, distance between batches (elements), unused
  out: vec4<u32>,      // offset, batch stride, row stride, column stride (elements)
  addend: vec4<u32>,
  scalars: array<vec4<u32>, 1>, // alpha, beta in the accumulator's type
}

@group(0) @binding(0) var<storage, read_write> out: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> partials: array<{{acc}}>;
@group(0) @binding(2) var<storage, read_write> addend: {{operand_array}};
@group(0) @binding(3) var<uniform> p: Params;

const WITH_ADDEND: bool = {{with_addend}};

fn load_addend(i: u32) -> {{acc}} {
  return {{load_addend}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = flat_thread(gid, groups, {{workgroup_size}}u);
  if (i >= p.dims.w) { return; }
  let per_batch = p.dims.x * p.dims.y;
  let batch = i / per_batch;
  let e = i % per_batch;
  let row = e / p.dims.y;
  let col = e % p.dims.y;
  let first = p.partials.x + batch * p.partials.z + e;
  let stride = p.partials.y;
  var sum = partials[first];
  var s = 1u;
  // Four loads issued before their four additions (still one after another, in slice order): a
  // thread waits out one memory latency per four slices, not per slice.
  for (; s + 4u <= p.dims.z; s += 4u) {
    let at = first + s * stride;
    let v0 = partials[at];
    let v1 = partials[at + stride];
    let v2 = partials[at + 2u * stride];
    let v3 = partials[at + 3u * stride];
    sum = (((sum + v0) + v1) + v2) + v3;
  }
  for (; s < p.dims.z; s++) {
    sum += partials[first + s * stride];
  }
  var v = {{alpha}} * sum;
  if (WITH_ADDEND) {
    v += {{beta}} * load_addend(p.addend.x + batch * p.addend.y + row * p.addend.z + col * p.addend.w);
  }
  out[p.out.x + batch * p.out.y + row * p.out.z + col * p.out.w] = v;
}
