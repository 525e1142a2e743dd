// The uniform block of the GEMM tile kernels (gemm.wgsl, gemm128.wgsl): one layout, so one host-side
// struct fills either.
struct Params {
  dims: vec4<u32>,   // m, n, k, batches in this dispatch
  a: vec4<u32>,      // offset, batch stride, row stride, column stride (elements)
  b: vec4<u32>,
  out: vec4<u32>,
  addend: vec4<u32>,
  scalars: array<vec4<u32>, 1>, // alpha, beta in the accumulator's type
  split: vec4<u32>,  // slices of K (1: no split), elements of K per slice, unused, unused
}
