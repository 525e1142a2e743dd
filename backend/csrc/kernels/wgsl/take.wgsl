// Element gather: out[e] = src[index[e]] for contiguous out and src, any dtype, by moving bits. One
// thread per output word: a word of a 1- or 2-byte dtype holds several output elements, so the thread
// assembles it lane by lane (no two threads write one word); an 8-byte element is two words. The
// caller has checked the indices are in range (and made negative ones positive).
//! include lib/grid.wgsl
//! include lib/bit_lanes.wgsl

struct Params {
  count: u32,      // elements
  words: u32,      // output words this launch writes
  out_offset: u32, // first output element within its window (a whole word for sub-word dtypes)
  src_offset: u32, // first source element within its window
  index_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> index: array<{{index_type}}>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.words) { return; }
  if (WIDE) {
    let e = t >> 1u;
    let element = p.src_offset + u32(index[p.index_offset + e]);
    out[p.out_offset * 2u + t] = src[element * 2u + (t & 1u)];
    return;
  }
  let lanes = 1u << LANES_LOG2;
  let bits = 32u >> LANES_LOG2;
  let w = (p.out_offset >> LANES_LOG2) + t;
  let first = t << LANES_LOG2;
  // A last word the tensor only partly fills keeps the bytes beyond it.
  var word = 0u;
  if (first + lanes > p.count) { word = out[w]; }
  for (var j = 0u; j < lanes; j++) {
    let e = first + j;
    if (e >= p.count) { break; }
    word = insertBits(word, src_element(p.src_offset + u32(index[p.index_offset + e])), j * bits, bits);
  }
  out[w] = word;
}
