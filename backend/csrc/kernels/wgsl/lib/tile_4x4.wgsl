// The 64x64 output tile of gemm.wgsl and conv2d.wgsl: K in steps of 16 through workgroup memory, each
// of a workgroup's 16x16 threads holding 4x4 outputs in `acc`. The accumulator type is a hole, not a
// WGSL alias: naga takes an array of an alias and the same array of the aliased type for two types.
// The includer fills the tiles; accumulate_4x4 then adds thread (x, y)'s products, rows y*4.. of A by
// columns x*4.. of B, one K element after another: each output sums in the same order everywhere.

var<workgroup> tile_a: array<{{acc}}, 1024>; // [k 16][rows 64]
var<workgroup> tile_b: array<{{acc}}, 1024>; // [k 16][cols 64]

fn accumulate_4x4(acc: ptr<function, array<{{acc}}, 16>>, x: u32, y: u32) {
  for (var kk = 0u; kk < 16u; kk++) {
    let ra = kk * 64u + y * 4u;
    let rb = kk * 64u + x * 4u;
    let av = vec4<{{acc}}>(tile_a[ra], tile_a[ra + 1u], tile_a[ra + 2u], tile_a[ra + 3u]);
    let bv = vec4<{{acc}}>(tile_b[rb], tile_b[rb + 1u], tile_b[rb + 2u], tile_b[rb + 3u]);
    for (var i = 0u; i < 4u; i++) {
      (*acc)[i * 4u + 0u] += av[i] * bv.x;
      (*acc)[i * 4u + 1u] += av[i] * bv.y;
      (*acc)[i * 4u + 2u] += av[i] * bv.z;
      (*acc)[i * 4u + 3u] += av[i] * bv.w;
    }
  }
}
