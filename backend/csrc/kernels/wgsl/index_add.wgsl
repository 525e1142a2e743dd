// out[a, r, c] += alpha * source[a, i, c] for every position i whose index is r: index_add_, and
// embedding_dense_backward (each sum starting at 0 instead of out's old value), after the positions
// are grouped by index (index_sort_*.wgsl). The same fold in other forms (a product, a
// NaN-propagating max or min; a mean's division) serves scatter_reduce and index_reduce, with or
// without out's old value in it. One thread per element of out (per word for 1- and 2-byte
// dtypes) adds its group's terms in position order, the CPU's order, in {{acc}}: the same bits every
// run, and no float atomics. With alpha 1 the sum has no product a driver could fuse.
// scale_grad_by_freq divides by the count with a correctly rounded division (WGSL's `/` may be 2.5
// ulp off).
//! include lib/grid.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  units: u32,         // threads: elements of out, or words of them for 1- and 2-byte dtypes
  elements: u32,      // outer * rows * inner
  rows: u32,          // size of the indexed dimension of out (the groups)
  inner: u32,         // elements after the indexed dimension
  positions: u32,     // size of the indexed dimension of source (the indices)
  out_offset: u32,    // elements
  source_offset: u32, // elements
  counts_offset: u32,
  ends_offset: u32,
  order_offset: u32,
  scalars: array<vec4<u32>, 1>, // alpha
}

@group(0) @binding(0) var<storage, read_write> out: array<{{array}}>;
@group(0) @binding(1) var<storage, read_write> source: array<{{array}}>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> ends: array<u32>;
@group(0) @binding(4) var<storage, read_write> order: array<u32>;
@group(0) @binding(5) var<uniform> p: Params;

const FOLD_OUT: bool = {{fold_out}};
const LANES: u32 = {{lanes}}u; // elements per stored word: 1, or 2 and 4 packed 1- and 2-byte ones

{{helpers}}

fn source_at(j: u32) -> {{acc}} {
  return {{acc}}({{source_load}});
}

// out's element e (relative to out_offset) as (column, row, outer); u32 arithmetic only, apart from
// the sum (whose type may be signed).
fn coordinates(e: u32) -> vec3<u32> {
  let slab = e / p.inner;
  let outer = slab / p.rows;
  return vec3<u32>(e - slab * p.inner, slab - outer * p.rows, outer);
}

// out's element e with its group's terms added.
fn summed(e: u32) -> {{acc}} {
  let at = coordinates(e);
  let column = at.x;
  let row = at.y;
  let outer = at.z;
  let count = counts[p.counts_offset + row];
  let end = ends[p.ends_offset + row];
  let alpha = {{alpha}};
  var sum = {{acc}}({{start}});
  // FOLD_OUT: out's old value (or 0) starts the fold; else the group's first term does.
  var fresh = !FOLD_OUT;
  for (var s = end - count; s < end; s++) {
    let j = p.source_offset + (outer * p.positions + order[p.order_offset + s]) * p.inner + column;
    let term = {{term}};
    if (fresh) {
      sum = term;
      fresh = false;
    } else {
      sum = {{combine}};
    }
  }
{{divide}}
  return sum;
}

// out's element e as the bits (or value) out stores.
fn stored(e: u32) -> {{array}} {
  return {{stored}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.units) { return; }
{{store}}
}
