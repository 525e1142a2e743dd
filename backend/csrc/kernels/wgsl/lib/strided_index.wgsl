// Index arithmetic of strided tensors (copy and elementwise): the family's Params holds the launch's
// `shape` (array<vec4<u32>, 2>: up to eight dimensions, dimension 0 varying fastest, TensorIterator's
// order) and, per operand k, its strides in `strides[2k]` and `strides[2k + 1]`; the family declares
// `const RANK: u32` (the loop below then has a constant trip count the driver unrolls). All u32:
// nothing here is a signed `%` whose result would be the driver's choice.

fn strided_index(i: u32, operand: u32, offset: u32) -> u32 {
  var rest = i;
  var index = offset;
  for (var d = 0u; d + 1u < RANK; d++) {
    let extent = p.shape[d >> 2u][d & 3u];
    index += (rest % extent) * p.strides[2u * operand + (d >> 2u)][d & 3u];
    rest = rest / extent;
  }
  let last = RANK - 1u;
  return index + rest * p.strides[2u * operand + (last >> 2u)][last & 3u];
}
