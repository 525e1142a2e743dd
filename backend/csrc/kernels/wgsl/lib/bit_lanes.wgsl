// How take.wgsl and put.wgsl address a dtype by its bits (kernels/bit_lanes.h): a 32-bit word holds
// 1 << LANES_LOG2 elements (4-byte dtypes: 1; 2-byte: 2; 1-byte: 4); WIDE: an 8-byte element is two
// words. Reads the family's `src` (array<u32>).
const LANES_LOG2: u32 = {{lanes_log2}}u;
const WIDE: bool = {{wide}};

// Element `element` of a sub-word src, in the low bits of the result.
fn src_element(element: u32) -> u32 {
  let bits = 32u >> LANES_LOG2;
  let lane = element & ((1u << LANES_LOG2) - 1u);
  return extractBits(src[element >> LANES_LOG2], lane * bits, bits);
}
