// out = alpha * (A @ B) [+ beta * addend] in float32 for outputs of at least 128x128: a 128x128 tile
// per workgroup of 16x16 threads, each thread 8x8 outputs held in sixteen vec4 registers (named, not an
// array, so no compiler spills them to memory), K in slices of 8, workgroup memory read as vec4 (the
// shape that measured 37 TFLOP/s on an H100 against 16 for gemm.wgsl: shared/reference/webgpu.md 2.8).
// Every operand is indexed through its strides. A slice's global loads run along the operand's
// unit-stride dimension (A_ROWS_FAST: A transposed; B_K_FAST: B transposed, as in linear), so
// neighbouring threads read neighbouring elements. A variant without an addend binds `out` in its place.
// Split-K as in gemm.wgsl: workgroup z is batch * slices + slice, over its slice of K only, its tile
// written at out's batch index z.
// The next slice's global loads are issued before the current slice's arithmetic (held in `Staged`
// registers meanwhile), so their latency hides behind 512 FMAs instead of stalling every slice.
// A_VEC / B_VEC: the operand's unit-stride dimension holds whole aligned quads (the host checks), so a
// thread loads its four elements of a slice with one vector load instead of four.

//! include lib/gemm_params.wgsl
//! include lib/gemm_tile.wgsl

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> a: {{a_array}};
@group(0) @binding(2) var<storage, read_write> b: {{b_array}};
@group(0) @binding(3) var<storage, read_write> addend: array<u32>;
@group(0) @binding(4) var<uniform> p: Params;

const WITH_ADDEND: bool = {{with_addend}};
const A_ROWS_FAST: bool = {{a_rows_fast}};
const B_K_FAST: bool = {{b_k_fast}};
const A_VEC: bool = {{a_vec}};
const B_VEC: bool = {{b_vec}};

// [k 8][128] per operand, as vec4 over rows (A) or columns (B).
var<workgroup> tile_a: array<vec4<f32>, 256>;
var<workgroup> tile_b: array<vec4<f32>, 256>;

// One thread's share of a slice: four elements of A and four of B, in the order `stage` stores them.
struct Staged {
  a: vec4<f32>,
  b: vec4<f32>,
}

fn load_a(i: u32) -> f32 {
  return {{load_a}};
}

fn load_b(i: u32) -> f32 {
  return {{load_b}};
}

// Elements i..i+3 (i a multiple of 4) of the quad-bound operands.
fn load4_a(i: u32) -> vec4<f32> {
  return {{load4_a}};
}

fn load4_b(i: u32) -> vec4<f32> {
  return {{load4_b}};
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

// Where element e (0..1023) of a slice lives, for the scalar loads: A's row and k, B's column and k.
fn a_place(e: u32) -> vec2<u32> {
  if (A_ROWS_FAST) { return vec2<u32>(e % 128u, e / 128u); }
  return vec2<u32>(e / 8u, e % 8u);
}

fn b_place(e: u32) -> vec2<u32> {
  if (B_K_FAST) { return vec2<u32>(e / 8u, e % 8u); }
  return vec2<u32>(e % 128u, e / 128u);
}

// Thread t's quad of a slice when an operand loads vectors: along K (A not transposed, B transposed),
// rows (or columns) t / 2 and k (t % 2) * 4 .. + 3; along rows (A transposed) or columns (B not
// transposed), k t / 32 and rows (columns) (t % 32) * 4 .. + 3.
fn quad_along_k(t: u32) -> vec2<u32> {
  return vec2<u32>(t / 2u, (t % 2u) * 4u);
}

fn quad_across_k(t: u32) -> vec2<u32> {
  return vec2<u32>((t % 32u) * 4u, t / 32u);
}

// This thread's elements of the slice starting at k0, read from global memory (zero past the edges).
fn fetch(tile: Tile, k0: u32) -> Staged {
  let m = p.dims.x;
  let n = p.dims.y;
  var s = Staged(vec4<f32>(0.0f), vec4<f32>(0.0f));
  if (A_VEC) {
    // The host requires m (A_ROWS_FAST) or K a multiple of 4, so a quad lies wholly inside or outside.
    let q = select(quad_along_k(tile.tid), quad_across_k(tile.tid), A_ROWS_FAST);
    if (tile.row0 + q.x < m && k0 + q.y < tile.k_end) {
      s.a = load4_a(tile.a_base + (tile.row0 + q.x) * p.a.z + (k0 + q.y) * p.a.w);
    }
  } else {
    for (var i = 0u; i < 4u; i++) {
      let at = a_place(tile.tid + i * 256u);
      if (tile.row0 + at.x < m && k0 + at.y < tile.k_end) {
        s.a[i] = load_a(tile.a_base + (tile.row0 + at.x) * p.a.z + (k0 + at.y) * p.a.w);
      }
    }
  }
  if (B_VEC) {
    let q = select(quad_across_k(tile.tid), quad_along_k(tile.tid), B_K_FAST);
    if (k0 + q.y < tile.k_end && tile.col0 + q.x < n) {
      s.b = load4_b(tile.b_base + (k0 + q.y) * p.b.z + (tile.col0 + q.x) * p.b.w);
    }
  } else {
    for (var i = 0u; i < 4u; i++) {
      let at = b_place(tile.tid + i * 256u);
      if (k0 + at.y < tile.k_end && tile.col0 + at.x < n) {
        s.b[i] = load_b(tile.b_base + (k0 + at.y) * p.b.z + (tile.col0 + at.x) * p.b.w);
      }
    }
  }
  return s;
}

// Element (row or column `r`, k `kk`) of a slice into its operand's tile.
fn put_a(r: u32, kk: u32, v: f32) {
  tile_a[kk * 32u + r / 4u][r % 4u] = v;
}

fn put_b(c: u32, kk: u32, v: f32) {
  tile_b[kk * 32u + c / 4u][c % 4u] = v;
}

// A quad along K is four k of one row; a quad across K is four rows of one k, one vec4 of the tile.
fn stage(tid: u32, s: Staged) {
  if (A_VEC) {
    if (A_ROWS_FAST) {
      let q = quad_across_k(tid);
      tile_a[q.y * 32u + q.x / 4u] = s.a;
    } else {
      let q = quad_along_k(tid);
      for (var j = 0u; j < 4u; j++) { put_a(q.x, q.y + j, s.a[j]); }
    }
  } else {
    for (var i = 0u; i < 4u; i++) {
      let at = a_place(tid + i * 256u);
      put_a(at.x, at.y, s.a[i]);
    }
  }
  if (B_VEC) {
    if (B_K_FAST) {
      let q = quad_along_k(tid);
      for (var j = 0u; j < 4u; j++) { put_b(q.x, q.y + j, s.b[j]); }
    } else {
      let q = quad_across_k(tid);
      tile_b[q.y * 32u + q.x / 4u] = s.b;
    }
  } else {
    for (var i = 0u; i < 4u; i++) {
      let at = b_place(tid + i * 256u);
      put_b(at.x, at.y, s.b[i]);
    }
  }
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
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
  var next = fetch(tile, tile.k_begin);
  for (var k0 = tile.k_begin; k0 < tile.k_end; k0 += 8u) {
    stage(tile.tid, next);
    workgroupBarrier();
    if (k0 + 8u < tile.k_end) {
      next = fetch(tile, k0 + 8u);
    }
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
