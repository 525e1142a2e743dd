// Where a workgroup of the GEMM tile kernels (gemm.wgsl, gemm128.wgsl) works, from their Params
// (lib/gemm_params.wgsl): workgroup z is batch * slices + slice, so the batch and the slice's range of
// K; its `size` x `size` output tile; its thread's index among the 16x16; and the batch's first
// element of A and of B.

struct Tile {
  batch: u32,
  k_begin: u32,
  k_end: u32,
  row0: u32,
  col0: u32,
  tid: u32,
  a_base: u32,
  b_base: u32,
}

fn tile_at(group: vec3<u32>, local: vec3<u32>, size: u32) -> Tile {
  let batch = group.z / p.split.x;
  let k_begin = (group.z % p.split.x) * p.split.y;
  return Tile(batch, k_begin, min(p.dims.z, k_begin + p.split.y), group.y * size, group.x * size,
              local.y * 16u + local.x, p.a.x + batch * p.a.y, p.b.x + batch * p.b.y);
}
