// The 64x64 output tile of gemm.wgsl and conv2d.wgsl: K in steps of 16 through workgroup memory, each
// of a workgroup's 16x16 threads holding 4x4 outputs in `acc`. The accumulator type is a hole, not a
// WGSL alias: naga takes an array of an alias and the same array of the aliased type for two types.
// The includer fills the tiles through put_a / put_b; accumulate_4x4 then adds thread (x, y)'s products,
// rows y*4.. of A by columns x*4.. of B, one K element after another: each output sums in the same
// order everywhere. The tiles are held as vec4 so that each K step reads a thread's four rows and four
// columns in two vector loads from workgroup memory rather than eight scalar ones.

var<workgroup> tile_a: array<vec4<{{acc}}>, 256>; // [k 16][rows 64]
var<workgroup> tile_b: array<vec4<{{acc}}>, 256>; // [k 16][cols 64]

// Element i = k * 64 + row (or column) of a tile.
fn put_a(i: u32, v: {{acc}}) {
  tile_a[i / 4u][i % 4u] = v;
}

fn put_b(i: u32, v: {{acc}}) {
  tile_b[i / 4u][i % 4u] = v;
}

fn accumulate_4x4(acc: ptr<function, array<{{acc}}, 16>>, x: u32, y: u32) {
  for (var kk = 0u; kk < 16u; kk++) {
    let av = tile_a[kk * 16u + y];
    let bv = tile_b[kk * 16u + x];
    for (var i = 0u; i < 4u; i++) {
      (*acc)[i * 4u + 0u] += av[i] * bv.x;
      (*acc)[i * 4u + 1u] += av[i] * bv.y;
      (*acc)[i * 4u + 2u] += av[i] * bv.z;
      (*acc)[i * 4u + 3u] += av[i] * bv.w;
    }
  }
}
