// Fill: every element of a strided destination set to one value, given as its bits in the
// destination's dtype (p.bits: the low word, and the high one for 8-byte dtypes). One variant per
// (element size, rank, store).
//! include lib/grid.wgsl
//! include lib/strided_index.wgsl

struct Params {
  numel: u32,
  out_offset: u32,
  words: u32,      // packed destination, dense: words written (parts/store_word.wgsl)
  first_word: u32,
  bits: vec2<u32>,
  shape: array<vec4<u32>, 2>,
  strides: array<vec4<u32>, 2>, // operand 0: dst
}

@group(0) @binding(0) var<storage, read_write> dst: array<{{dst_array}}>;
@group(0) @binding(1) var<uniform> p: Params;

const WORKGROUP_SIZE: u32 = {{workgroup_size}}u;
const RANK: u32 = {{rank}}u;
const LANES_LOG2: u32 = {{lanes_log2}}u;

fn dst_index(e: u32) -> u32 {
  return strided_index(e, 0u, p.out_offset);
}

fn element(e: u32) -> {{store_type}} {
  return {{value}};
}

{{main}}
