// conv2d as an implicit GEMM: the forward pass and both weight-carrying gradients, each a GEMM per
// group whose operands are read straight from the 4-D tensors through their strides (NCHW,
// channels_last or any view), with padding, stride and dilation turned into bounds checks, so no
// im2col buffer exists. Workgroup z is group * slices + slice; a TILE x TILE output tile per workgroup
// of 16x16 threads: 64x64 with 4x4 outputs per thread and K in steps of 16 (gemm.wgsl's tiling), or,
// WIDE, 128x128 with 8x8 per thread in sixteen vec4 registers and K in steps of 8 (gemm128.wgsl's);
// either way 1024 elements of each operand per step through workgroup memory. Accumulates and writes
// float32; float16/bfloat16 operands are widened on load.
//
//   PASS_FORWARD      rows: output pixels (n, oh, ow)  cols: out channels of the group  K: (c, kh, kw)
//   PASS_GRAD_INPUT   rows: input pixels (n, ih, iw)   cols: in channels of the group   K: (o, kh, kw)
//   PASS_GRAD_WEIGHT  rows: out channels of the group  cols: (c, kh, kw)                K: (n, oh, ow)
//
// K (or grad_weight's columns) decodes its channel/kernel-offset triple with the channel fastest when
// CHANNELS_LAST, so that consecutive K reads of an NHWC tensor are adjacent. Decoding costs integer
// divisions, so each K step's 16 indices are decoded once per workgroup into `k_table`, and each
// thread's rows / columns once before the K loop: the inner loads are adds, compares and one multiply
// per stride. The next step's indices are decoded and its elements loaded into registers before the
// current step's products, so the loads' latency overlaps them (two tables alternate).
// grad_input is a gather (no atomics): input pixel (ih, iw) receives tap (kh, kw) of output pixel
// ((ih + pad - kh * dil) / stride, ...) when that division is exact and in range. With a stride, the
// input pixels split into stride_h x stride_w phases by (ih + pad) mod stride, and only the taps of
// the same phase (kh * dil mod stride) divide exactly: one dispatch per phase walks just those rows
// and taps (a quarter of each at stride 2), where the division is a subtraction.
// grad_weight over a long N * OH * OW runs split-K into partials [slice][o][c][kh][kw] that
// gemm_split_sum.wgsl adds in slice order.
// `acc += a * b` may be contracted into an FMA by a driver: float results differ in the last bits
// between adapters, within the tolerance any reordered dot product needs.

//! include lib/tile_4x4.wgsl

struct Params {
  m: u32,            // GEMM rows, columns and depth per group
  n: u32,
  k: u32,
  slices: u32,       // of K (1: no split)
  depth: u32,        // K per slice
  grid_h: u32,       // spatial size the pixel index of rows (forward, grad_input) or K (grad_weight) runs over
  grid_w: u32,
  image_h: u32,      // spatial size of the tensor read through the window (x; grad_output for grad_input)
  image_w: u32,
  kernel_h: u32,     // kernel taps walked per axis (grad_input: those of its phase)
  kernel_w: u32,
  stride_h: u32,
  stride_w: u32,
  pad_h: u32,        // grad_input: the output row / column its grid point 0 reads with tap 0
  pad_w: u32,
  channels: u32,     // channels of the (channel, kh, kw) index: c per group (forward, grad_weight), o per group
  group_in: u32,     // input channels per group
  group_out: u32,    // output channels per group
  taps: vec4<u32>,   // spatial offset of tap (i, j): (x + i * z, y + j * w)
  kernel: vec4<u32>, // its position in the weight: (x + i * z, y + j * w)
  rows: vec4<u32>,   // grad_input: the input position of grid point (a, b): (x + a * z, y + b * w)
  window: vec4<u32>, // strides (n, c, h, w) of `windowed`
  plain: vec4<u32>,  // strides of `plain`: weight (o, c, kh, kw), or grad_output (n, o, oh, ow) for grad_weight
  dst: vec4<u32>,    // strides of `out`: (n, c, h, w), or (o, c, kh, kw) for grad_weight
  window_offset: u32,
  plain_offset: u32,
  out_offset: u32,
  out_slice: u32,    // distance between split-K slices in `out`
  bias_offset: u32,
  row_base: u32,     // first row of this dispatch: rows beyond one dispatch's 65535 tiles run in several
}

@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> windowed: array<u32>; // x, or grad_output for grad_input
@group(0) @binding(2) var<storage, read_write> plain: array<u32>;    // weight, or grad_output for grad_weight
@group(0) @binding(3) var<storage, read_write> bias: array<u32>;     // `plain` again without a bias
@group(0) @binding(4) var<uniform> p: Params;

const PASS_FORWARD: u32 = 0u;
const PASS_GRAD_INPUT: u32 = 1u;
const PASS_GRAD_WEIGHT: u32 = 2u;
const PASS: u32 = {{pass}}u;
const CHANNELS_LAST: bool = {{channels_last}};
const WITH_BIAS: bool = {{with_bias}};
// Which index consecutive threads take when filling a tile: K (true) or its rows / columns (false),
// whichever is adjacent in memory for the operand's layout, so a warp's loads coalesce.
const A_K_FAST: bool = {{a_k_fast}};
const B_K_FAST: bool = {{b_k_fast}};
const TILE: u32 = {{tile}}u;
const STEP: u32 = {{step}}u;
const WIDE: bool = TILE == 128u;

// A decoded row, column or K index: an element offset and a spatial position (signed: a window may
// start in the padding), `ok` false beyond the matrix.
struct Part {
  offset: u32,
  extra: u32,
  h: i32,
  w: i32,
  ok: bool,
}

// The decoded K indices of two steps: the current one's, and the next one's while it is fetched.
var<workgroup> k_table: array<array<Part, 16>, 2>;

fn load_windowed(i: u32) -> f32 {
  return {{load_windowed}};
}

fn load_plain(i: u32) -> f32 {
  return {{load_plain}};
}

fn load_bias(i: u32) -> f32 {
  return {{load_bias}};
}

// (n, y, x) of a pixel index over the grid.
fn pixel(i: u32) -> vec3<u32> {
  let per_image = p.grid_h * p.grid_w;
  let rest = i % per_image;
  return vec3<u32>(i / per_image, rest / p.grid_w, rest % p.grid_w);
}

// (channel, kh, kw) of an index over channels x kernel taps, in the order CHANNELS_LAST says.
fn tap(i: u32) -> vec3<u32> {
  let taps = p.kernel_h * p.kernel_w;
  var channel: u32;
  var t: u32;
  if (CHANNELS_LAST) {
    channel = i % p.channels;
    t = i / p.channels;
  } else {
    channel = i / taps;
    t = i % taps;
  }
  return vec3<u32>(channel, t / p.kernel_w, t % p.kernel_w);
}

fn row_part(row: u32, group: u32) -> Part {
  if (PASS == PASS_FORWARD) {
    let at = pixel(row);
    return Part(at.x * p.window.x + group * p.group_in * p.window.y, 0u,
                i32(at.y * p.stride_h) - i32(p.pad_h), i32(at.z * p.stride_w) - i32(p.pad_w), row < p.m);
  }
  if (PASS == PASS_GRAD_INPUT) {
    let at = pixel(row);
    return Part(at.x * p.window.x + group * p.group_out * p.window.y, 0u, i32(at.y + p.pad_h),
                i32(at.z + p.pad_w), row < p.m);
  }
  return Part((group * p.group_out + row) * p.plain.y, 0u, 0, 0, row < p.m);
}

fn k_part(k: u32, k_end: u32) -> Part {
  if (PASS == PASS_GRAD_WEIGHT) {
    let at = pixel(k);
    return Part(at.x * p.plain.x + at.y * p.plain.z + at.z * p.plain.w, at.x * p.window.x,
                i32(at.y * p.stride_h) - i32(p.pad_h), i32(at.z * p.stride_w) - i32(p.pad_w), k < k_end);
  }
  let t = tap(k);
  let h = i32(p.taps.x + t.y * p.taps.z);
  let w = i32(p.taps.y + t.z * p.taps.w);
  let taps = (p.kernel.x + t.y * p.kernel.z) * p.plain.z + (p.kernel.y + t.z * p.kernel.w) * p.plain.w;
  if (PASS == PASS_FORWARD) { return Part(t.x * p.window.y, t.x * p.plain.y + taps, h, w, k < k_end); }
  return Part(t.x * p.window.y, t.x * p.plain.x + taps, h, w, k < k_end);
}

fn col_part(col: u32, group: u32) -> Part {
  if (PASS == PASS_FORWARD) { return Part((group * p.group_out + col) * p.plain.x, 0u, 0, 0, col < p.n); }
  if (PASS == PASS_GRAD_INPUT) {
    return Part(group * p.group_out * p.plain.x + col * p.plain.y, 0u, 0, 0, col < p.n);
  }
  let t = tap(col);
  return Part((group * p.group_in + t.x) * p.window.y, 0u, i32(p.taps.x + t.y * p.taps.z),
              i32(p.taps.y + t.z * p.taps.w), col < p.n);
}

// Element (h, w) of `windowed` from `offset` (its batch and channel), 0 in the padding.
fn window_value(offset: u32, h: i32, w: i32) -> f32 {
  if (h < 0 || w < 0 || u32(h) >= p.image_h || u32(w) >= p.image_w) { return 0.0; }
  return load_windowed(p.window_offset + offset + u32(h) * p.window.z + u32(w) * p.window.w);
}

fn a_value(r: Part, k: Part) -> f32 {
  if (!r.ok || !k.ok) { return 0.0; }
  if (PASS == PASS_FORWARD) { return window_value(r.offset + k.offset, r.h + k.h, r.w + k.w); }
  // grad_input's positions count output rows / columns: the phase's taps all land on one.
  if (PASS == PASS_GRAD_INPUT) { return window_value(r.offset + k.offset, r.h - k.h, r.w - k.w); }
  return load_plain(p.plain_offset + r.offset + k.offset);
}

fn b_value(k: Part, c: Part) -> f32 {
  if (!k.ok || !c.ok) { return 0.0; }
  if (PASS == PASS_GRAD_WEIGHT) { return window_value(k.extra + c.offset, k.h + c.h, k.w + c.w); }
  return load_plain(p.plain_offset + c.offset + k.extra);
}

// Where output (row, col) of `group` goes within `out` (before the slice's offset).
fn out_index(row: u32, col: u32, group: u32) -> u32 {
  if (PASS == PASS_GRAD_WEIGHT) {
    let t = tap(col);
    return (group * p.group_out + row) * p.dst.x + t.x * p.dst.y + (p.kernel.x + t.y * p.kernel.z) * p.dst.z +
        (p.kernel.y + t.z * p.kernel.w) * p.dst.w;
  }
  let at = pixel(row);
  if (PASS == PASS_GRAD_INPUT) {
    return at.x * p.dst.x + (group * p.group_in + col) * p.dst.y + (p.rows.x + at.y * p.rows.z) * p.dst.z +
        (p.rows.y + at.z * p.rows.w) * p.dst.w;
  }
  return at.x * p.dst.x + (group * p.group_out + col) * p.dst.y + at.y * p.dst.z + at.z * p.dst.w;
}

// Tile position (row or column, k) that thread `tid` fills in its i-th load.
fn slot(tid: u32, i: u32, k_fast: bool) -> vec2<u32> {
  let e = tid + i * 256u;
  if (k_fast) { return vec2<u32>(e / STEP, e % STEP); }
  return vec2<u32>(e % TILE, e / TILE);
}

// One thread's share of a K step: four elements of A and four of B, in the order `stage` stores them.
struct Staged {
  a: vec4<f32>,
  b: vec4<f32>,
}

// This thread's elements of the step whose K indices are in k_table[table]. Read one step ahead, so
// the loads are in flight while the current step's products run.
fn fetch(table: u32, tid: u32, rows: array<Part, 4>, cols: array<Part, 4>) -> Staged {
  var s = Staged(vec4<f32>(0.0), vec4<f32>(0.0));
  for (var i = 0u; i < 4u; i++) {
    s.a[i] = a_value(rows[i], k_table[table][slot(tid, i, A_K_FAST).y]);
    s.b[i] = b_value(k_table[table][slot(tid, i, B_K_FAST).y], cols[i]);
  }
  return s;
}

fn stage(tid: u32, s: Staged) {
  for (var i = 0u; i < 4u; i++) {
    let sa = slot(tid, i, A_K_FAST);
    put_a(sa.y * TILE + sa.x, s.a[i]);
    let sb = slot(tid, i, B_K_FAST);
    put_b(sb.y * TILE + sb.x, s.b[i]);
  }
}

// Output (row, col) of `group`, the bias added, unless beyond the matrix.
fn store(base: u32, row: u32, col: u32, group: u32, value: f32) {
  if (row >= p.m || col >= p.n) { return; }
  var v = value;
  if (WITH_BIAS) { v += load_bias(p.bias_offset + group * p.group_out + col); }
  out[base + out_index(row, col, group)] = v;
}

// Columns col..col+3 of one output row, from one of WIDE's accumulator registers.
fn store4(base: u32, row: u32, col: u32, group: u32, c: vec4<f32>) {
  for (var j = 0u; j < 4u; j++) { store(base, row, col + j, group, c[j]); }
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
  let group = wg.z / p.slices;
  let slice = wg.z % p.slices;
  let k_begin = slice * p.depth;
  let k_end = min(p.k, k_begin + p.depth);
  let row0 = p.row_base + wg.y * TILE;
  let col0 = wg.x * TILE;
  let tid = local.y * 16u + local.x;
  var rows: array<Part, 4>;
  var cols: array<Part, 4>;
  for (var i = 0u; i < 4u; i++) {
    rows[i] = row_part(row0 + slot(tid, i, A_K_FAST).x, group);
    cols[i] = col_part(col0 + slot(tid, i, B_K_FAST).x, group);
  }
  var acc: array<f32, 16>;
  // WIDE: thread (x, y) owns rows y*4.. and 64+y*4.. of the tile, columns x*4.. and 64+x*4..: c<i><h> is
  // row i (0-7) by column half h.
  var c00 = vec4<f32>(0.0); var c01 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0); var c11 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0); var c21 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0); var c31 = vec4<f32>(0.0);
  var c40 = vec4<f32>(0.0); var c41 = vec4<f32>(0.0);
  var c50 = vec4<f32>(0.0); var c51 = vec4<f32>(0.0);
  var c60 = vec4<f32>(0.0); var c61 = vec4<f32>(0.0);
  var c70 = vec4<f32>(0.0); var c71 = vec4<f32>(0.0);
  if (tid < STEP) { k_table[0][tid] = k_part(k_begin + tid, k_end); }
  workgroupBarrier();
  var next = fetch(0u, tid, rows, cols);
  var table = 0u;
  for (var k0 = k_begin; k0 < k_end; k0 += STEP) {
    stage(tid, next);
    // The other table's last readers, the fetch two steps back, finished at that step's second barrier.
    let more = k0 + STEP < k_end;
    if (more && tid < STEP) { k_table[1u - table][tid] = k_part(k0 + STEP + tid, k_end); }
    workgroupBarrier();
    if (more) {
      next = fetch(1u - table, tid, rows, cols);
    }
    if (WIDE) {
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
    } else {
      accumulate_4x4(&acc, local.x, local.y);
    }
    workgroupBarrier();
    table = 1u - table;
  }
  let base = p.out_offset + slice * p.out_slice;
  if (WIDE) {
    let top = row0 + local.y * 4u;
    let left = col0 + local.x * 4u;
    store4(base, top + 0u, left, group, c00); store4(base, top + 0u, left + 64u, group, c01);
    store4(base, top + 1u, left, group, c10); store4(base, top + 1u, left + 64u, group, c11);
    store4(base, top + 2u, left, group, c20); store4(base, top + 2u, left + 64u, group, c21);
    store4(base, top + 3u, left, group, c30); store4(base, top + 3u, left + 64u, group, c31);
    store4(base, top + 64u, left, group, c40); store4(base, top + 64u, left + 64u, group, c41);
    store4(base, top + 65u, left, group, c50); store4(base, top + 65u, left + 64u, group, c51);
    store4(base, top + 66u, left, group, c60); store4(base, top + 66u, left + 64u, group, c61);
    store4(base, top + 67u, left, group, c70); store4(base, top + 67u, left + 64u, group, c71);
    return;
  }
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      store(base, row0 + local.y * 4u + i, col0 + local.x * 4u + j, group, acc[i * 4u + j]);
    }
  }
}
