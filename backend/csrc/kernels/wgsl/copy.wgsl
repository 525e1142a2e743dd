// Strided device-to-device copy, with the dtype conversion when source and destination differ: one
// variant per (source dtype or raw bits, destination dtype, rank, store). A raw copy moves an
// element's bits (u32 lanes, vec2<u32> or vec4<u32> words); a converting one loads the source as its
// computation type and stores it in the destination's form. Shapes and strides are parameters, so a
// variant serves every tensor of its rank.
//! include lib/grid.wgsl
//! include lib/strided_index.wgsl
//! include lib/bf16_bits.wgsl

struct Params {
  numel: u32,      // elements of this launch
  out_offset: u32, // first destination element within its window
  in_offset: u32,  // first source element within its window
  words: u32,      // packed destination, dense: words written (parts/store_word.wgsl)
  first_word: u32,
  shape: array<vec4<u32>, 2>,
  strides: array<vec4<u32>, 4>, // operand 0: dst, 1: src
}

// Every storage binding is read_write: one buffer may be bound twice (in-place copies), and a
// read-only plus read-write binding of one buffer in one dispatch is a validation error.
@group(0) @binding(0) var<storage, read_write> dst: array<{{dst_array}}>;
@group(0) @binding(1) var<storage, read_write> src: array<{{src_array}}>;
@group(0) @binding(2) var<uniform> p: Params;

const WORKGROUP_SIZE: u32 = {{workgroup_size}}u;
const RANK: u32 = {{rank}}u;
// Destination elements per u32 word, as a power of two (packed 1- and 2-byte dtypes).
const LANES_LOG2: u32 = {{lanes_log2}}u;

fn dst_index(e: u32) -> u32 {
  return strided_index(e, 0u, p.out_offset);
}

fn src_index(e: u32) -> u32 {
  return strided_index(e, 1u, p.in_offset);
}

// The stored form of element e.
fn element(e: u32) -> {{store_type}} {
  let v = {{load}};
  return {{store}};
}

{{main}}
