// The uniform block of the elementwise families (elementwise.wgsl, elementwise_quad.wgsl): one
// layout, so one host-side struct fills either.
struct Params {
  numel: u32,      // elements of this launch (groups of four in elementwise_quad.wgsl)
  out_offset: u32, // first output element within its window
  words: u32,      // packed output, dense: words written (parts/store_word.wgsl)
  first_word: u32,
  a_offset: u32,   // first element of each tensor input within its window
  b_offset: u32,
  c_offset: u32,
  shape: array<vec4<u32>, 2>,
  strides: array<vec4<u32>, 8>, // operand 0: out, 1..3: a, b, c
  scalars: array<vec4<u32>, 4>, // 64-bit slots (kernels/dtypes.h): CPU-scalar inputs, then s0..s4
}
