// tril / triu of a batch of row-major matrices. They only move bits, so one kernel over 32-bit words
// serves every dtype: a word holds 4 lanes of a 1-byte dtype, 2 of a 2-byte one, a whole 4-byte
// element, or a part of an 8- or 16-byte one. One thread per word keeps the lanes of the elements on
// the kept side of diagonal k and zeroes the others. Source and destination start on a word boundary
// (the caller sees to it); lanes of the last word past the tensor keep the destination's bits. A
// tensor larger than one storage binding is bound a slice of words per dispatch (word_base on).
//! include lib/grid.wgsl

struct Params {
  words: u32,         // in this dispatch's slice
  word_base: u32,     // the slice's first word within the tensor
  elements: u32,
  rows: u32,
  cols: u32,
  diagonal: i32,      // k clamped to [-rows, cols]: any k beyond keeps or drops alike
  lower: u32,         // 1: tril (keep col - row <= k); 0: triu (keep col - row >= k)
  lane_shift: u32,    // log2 of elements per word: 2 for 1-byte dtypes, 1 for 2-byte ones, else 0
  element_shift: u32, // log2 of words per element: 1 for 8-byte dtypes, 2 for 16-byte ones, else 0
  src_offset: u32,    // words, the slice's start in its window
  dst_offset: u32,    // words, the slice's start in its window
}

@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

// Unsigned index arithmetic only; the signed difference of two values below 2^31 is exact.
fn kept(e: u32) -> bool {
  let slab = e / p.cols;
  let col = e - slab * p.cols;
  let row = slab % p.rows;
  let above = i32(col) - i32(row);
  return select(above >= p.diagonal, above <= p.diagonal, p.lower != 0u);
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.words) { return; }
  let lane_bits = 32u >> p.lane_shift;
  var keep = 0u;    // lanes taken from the source
  var outside = 0u; // lanes past the tensor's end
  for (var j = 0u; j < (1u << p.lane_shift); j++) {
    let e = (((p.word_base + t) << p.lane_shift) + j) >> p.element_shift;
    let lane = (0xFFFFFFFFu >> (32u - lane_bits)) << (j * lane_bits);
    if (e >= p.elements) {
      outside = outside | lane;
    } else if (kept(e)) {
      keep = keep | lane;
    }
  }
  var word = src[p.src_offset + t] & keep;
  if (outside != 0u) { word = word | (dst[p.dst_offset + t] & outside); }
  dst[p.dst_offset + t] = word;
}
