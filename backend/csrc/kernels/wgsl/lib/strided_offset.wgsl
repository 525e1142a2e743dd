// Index arithmetic for strided tensors of up to 8 dimensions (kMaxCopyRank), their sizes and strides
// held in uniform `array<vec4<u32>, 2>` fields (dimension d at [d / 4][d % 4], dimension 0 fastest).
// `rank` is a module constant at every call, so drivers unroll the loop into constant indices.

// The element offset of linear position `i` through `stride`, over `shape`'s first `rank` dimensions
// (at least 1): the last one takes what is left of `i` whole, so a position past the shape still maps.
fn strided_offset(i: u32, shape: array<vec4<u32>, 2>, stride: array<vec4<u32>, 2>, rank: u32) -> u32 {
  var rest = i;
  var offset = 0u;
  for (var d = 0u; d + 1u < rank; d++) {
    let size = shape[d / 4u][d % 4u];
    offset += (rest % size) * stride[d / 4u][d % 4u];
    rest = rest / size;
  }
  let last = rank - 1u;
  return offset + rest * stride[last / 4u][last % 4u];
}
