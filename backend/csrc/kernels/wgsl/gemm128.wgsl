// out = alpha * (A @ B) [+ beta * addend] in float32 for outputs of at least 128x128: a 128x128 tile
// per workgroup of 16x16 threads, each thread 8x8 outputs held in sixteen vec4 registers (named, not an
// array, so no compiler spills them to memory), K in slices of 8, workgroup memory read as vec4 (the
// shape that measured 37 TFLOP/s on an H100 against 16 for gemm.wgsl: shared/reference/webgpu.md 2.8).
// Every operand is indexed through its strides. A slice's global loads run along the operand's
// unit-stride dimension (A_ROWS_FAST: A transposed; B_K_FAST: B transposed, as in linear), so
// neighbouring threads read neighbouring elements. A variant without an addend binds `out` in its place.
// Split-K as in gemm.wgsl: workgroup z is batch * slices + slice, over its slice of K only, its tile
// written at out's batch index z.

//! include lib/gemm_params.wgsl
//! include lib/gemm_tile.wgsl

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> a: array<u32>;
@group(0) @binding(2) var<storage, read_write> b: array<u32>;
@group(0) @binding(3) var<storage, read_write> addend: array<u32>;
@group(0) @binding(4) var<uniform> p: Params;

const WITH_ADDEND: bool = {{with_addend}};
const A_ROWS_FAST: bool = {{a_rows_fast}};
const B_K_FAST: bool = {{b_k_fast}};

// [k 8][128] per operand, as vec4 over rows (A) or columns (B).
var<workgroup> tile_a: array<vec4<f32>, 256>;
var<workgroup> tile_b: array<vec4<f32>, 256>;

fn load_a(i: u32) -> f32 {
  return {{load_a}};
}

fn load_b(i: u32) -> f32 {
  return {{load_b}};
}

fn load_addend(i: u32) -> f32 {
  return {{load_addend}};
}

// Columns col..col+3 of one output row, from one accumulator register.
// `batch` indexes the addend, `slot` the output (batch * slices + slice).
fn store4(batch: u32, slot: u32, row: u32, col: u32, c: vec4<f32>) {
  if (row >= p.dims.x) { return; }
  let alpha = {{alpha}};
  let beta = {{beta}};
  for (var j = 0u; j < 4u; j++) {
    if (col + j < p.dims.y) {
      var v = alpha * c[j];
      if (WITH_ADDEND) {
        v += beta * load_addend(p.addend.x + batch * p.addend.y + row * p.addend.z + (col + j) * p.addend.w);
      }
      out[p.out.x + slot * p.out.y + row * p.out.z + (col + j) * p.out.w] = v;
    }
  }
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let m = p.dims.x;
  let n = p.dims.y;
  let tile = tile_at(group, local, 128u);
  // Thread (x, y) owns rows y*4..y*4+3 and 64+y*4.. of the tile, columns x*4.. and 64+x*4..: c<i><h> is
  // row i (0-7) by column half h.
  var c00 = vec4<f32>(0.0f); var c01 = vec4<f32>(0.0f);
  var c10 = vec4<f32>(0.0f); var c11 = vec4<f32>(0.0f);
  var c20 = vec4<f32>(0.0f); var c21 = vec4<f32>(0.0f);
  var c30 = vec4<f32>(0.0f); var c31 = vec4<f32>(0.0f);
  var c40 = vec4<f32>(0.0f); var c41 = vec4<f32>(0.0f);
  var c50 = vec4<f32>(0.0f); var c51 = vec4<f32>(0.0f);
  var c60 = vec4<f32>(0.0f); var c61 = vec4<f32>(0.0f);
  var c70 = vec4<f32>(0.0f); var c71 = vec4<f32>(0.0f);
  for (var k0 = tile.k_begin; k0 < tile.k_end; k0 += 8u) {
    for (var i = 0u; i < 4u; i++) {
      let e = tile.tid + i * 256u;
      var r = e / 8u;
      var kk = e % 8u;
      if (A_ROWS_FAST) {
        r = e % 128u;
        kk = e / 128u;
      }
      var v = 0.0f;
      if (tile.row0 + r < m && k0 + kk < tile.k_end) {
        v = load_a(tile.a_base + (tile.row0 + r) * p.a.z + (k0 + kk) * p.a.w);
      }
      tile_a[kk * 32u + r / 4u][r % 4u] = v;
      var c = e % 128u;
      var kb = e / 128u;
      if (B_K_FAST) {
        c = e / 8u;
        kb = e % 8u;
      }
      var u = 0.0f;
      if (k0 + kb < tile.k_end && tile.col0 + c < n) {
        u = load_b(tile.b_base + (k0 + kb) * p.b.z + (tile.col0 + c) * p.b.w);
      }
      tile_b[kb * 32u + c / 4u][c % 4u] = u;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 8u; kk++) {
      let a0 = tile_a[kk * 32u + local.y];
      let a1 = tile_a[kk * 32u + 16u + local.y];
      let b0 = tile_b[kk * 32u + local.x];
      let b1 = tile_b[kk * 32u + 16u + local.x];
      c00 = fma(vec4<f32>(a0.x), b0, c00); c01 = fma(vec4<f32>(a0.x), b1, c01);
      c10 = fma(vec4<f32>(a0.y), b0, c10); c11 = fma(vec4<f32>(a0.y), b1, c11);
      c20 = fma(vec4<f32>(a0.z), b0, c20); c21 = fma(vec4<f32>(a0.z), b1, c21);
      c30 = fma(vec4<f32>(a0.w), b0, c30); c31 = fma(vec4<f32>(a0.w), b1, c31);
      c40 = fma(vec4<f32>(a1.x), b0, c40); c41 = fma(vec4<f32>(a1.x), b1, c41);
      c50 = fma(vec4<f32>(a1.y), b0, c50); c51 = fma(vec4<f32>(a1.y), b1, c51);
      c60 = fma(vec4<f32>(a1.z), b0, c60); c61 = fma(vec4<f32>(a1.z), b1, c61);
      c70 = fma(vec4<f32>(a1.w), b0, c70); c71 = fma(vec4<f32>(a1.w), b1, c71);
    }
    workgroupBarrier();
  }
  let top = tile.row0 + local.y * 4u;
  let left = tile.col0 + local.x * 4u;
  store4(tile.batch, group.z, top + 0u, left, c00); store4(tile.batch, group.z, top + 0u, left + 64u, c01);
  store4(tile.batch, group.z, top + 1u, left, c10); store4(tile.batch, group.z, top + 1u, left + 64u, c11);
  store4(tile.batch, group.z, top + 2u, left, c20); store4(tile.batch, group.z, top + 2u, left + 64u, c21);
  store4(tile.batch, group.z, top + 3u, left, c30); store4(tile.batch, group.z, top + 3u, left + 64u, c31);
  store4(tile.batch, group.z, top + 64u, left, c40); store4(tile.batch, group.z, top + 64u, left + 64u, c41);
  store4(tile.batch, group.z, top + 65u, left, c50); store4(tile.batch, group.z, top + 65u, left + 64u, c51);
  store4(tile.batch, group.z, top + 66u, left, c60); store4(tile.batch, group.z, top + 66u, left + 64u, c61);
  store4(tile.batch, group.z, top + 67u, left, c70); store4(tile.batch, group.z, top + 67u, left + 64u, c71);
}
