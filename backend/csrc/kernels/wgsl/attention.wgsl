// Fused scaled-dot-product attention, forward and backward, for (batch * heads) problems whose rows
// are a query of length `qk_dim` (keys the same) and a value of length `v_dim`, each at most 128.
//
// SPLIT ({{split}}) threads own one row (a query in `forward` and `backward_query`, a key in
// `backward_key_value`), a workgroup ROWS = 64 / SPLIT consecutive rows of one (batch, head): so a GPU
// gets SPLIT times the workgroups and each thread a SPLIT-th of the serial work. The other side's rows
// pass through workgroup memory in tiles of {{tile_rows}} rows, zero-padded to whole vec4s, so each
// row's arithmetic is over constant lengths the compiler can unroll; part t of a row takes the tile's
// rows t, t + SPLIT, ... and the parts' partial sums are added up in part order at the end (`merged`).
// All arithmetic in f32, whatever the storage dtype.
//
// forward: an online softmax over each part's keys in key order: the running max `m` and sum `l`
// rescale the accumulator only when the max grows; the parts then meet at the row's max. Writes the
// output and logsumexp = m + log(l).
// backward_query: recomputes each probability from the saved logsumexp, writes dQ and
// delta = rowsum(P * dP); backward_key_value (dispatched after it) reads delta and writes dK and dV.
// Each output is a sum in a fixed order (each part's keys in order, then the parts in order): no
// atomics, the same bits on every run.
//
// Masking: the causal mask is the index test key <= query (top-left aligned, as PyTorch's is_causal);
// the optional mask is read in place through its (broadcast, possibly zero) strides, additive when
// float and "may attend" when bool. A score of -inf contributes nothing; a query row whose every score
// is -inf gets zeros and logsumexp -inf (PyTorch's math path gives zeros there too).
//! include lib/grid.wgsl

struct Params {
  heads: u32,
  batch_heads: u32,
  q_len: u32,
  k_len: u32,
  qk_dim: u32,
  v_dim: u32,
  scale: f32,
  causal: u32,
  has_mask: u32,
  q_offset: u32,
  q_batch: u32,
  q_head: u32,
  q_row: u32,
  k_offset: u32,
  k_batch: u32,
  k_head: u32,
  k_row: u32,
  v_offset: u32,
  v_batch: u32,
  v_head: u32,
  v_row: u32,
  mask_offset: u32,
  mask_batch: u32,
  mask_head: u32,
  mask_row: u32,
  mask_col: u32,
  out_offset: u32,    // forward: the f32 output it writes
  out_batch: u32,
  out_head: u32,
  out_row: u32,
  dout_offset: u32,
  dout_batch: u32,
  dout_head: u32,
  dout_row: u32,
  lse_offset: u32,
  result_offset: u32,  // backward: dQ, or dK, contiguous (batch_heads, rows, qk_dim) f32
  result2_offset: u32, // backward: delta (batch_heads, q_len), or dV (batch_heads, k_len, v_dim)
  delta_offset: u32,   // backward_key_value: delta, at binding 7
}

// Operands the pass does not use are bound to some other operand, never read.
@group(0) @binding(0) var<storage, read_write> result: array<f32>;
@group(0) @binding(1) var<storage, read_write> lse: array<f32>;
@group(0) @binding(2) var<storage, read_write> q: array<u32>;
@group(0) @binding(3) var<storage, read_write> k: array<u32>;
@group(0) @binding(4) var<storage, read_write> v: array<u32>;
@group(0) @binding(5) var<storage, read_write> mask: array<u32>;
@group(0) @binding(6) var<storage, read_write> dout: array<u32>;
@group(0) @binding(7) var<storage, read_write> extra: array<u32>; // backward_key_value: delta
@group(0) @binding(8) var<uniform> p: Params;

const LANES = 64u;
const SPLIT = {{split}}u;
const ROWS = LANES / SPLIT;
const QK4 = {{qk_vec4s}}u;
const V4 = {{v_vec4s}}u;
const TILE = {{tile_rows}}u;

var<workgroup> tile_a: array<vec4<f32>, {{tile_a_size}}>; // rows of qk_dim: keys, or queries
var<workgroup> tile_b: array<vec4<f32>, {{tile_b_size}}>; // rows of v_dim: values, or dO
var<workgroup> tile_lse: array<f32, {{tile_rows}}>;
var<workgroup> tile_delta: array<f32, {{tile_rows}}>;
// The parts' partial sums on their way to the row's total.
var<workgroup> merge_vec: array<vec4<f32>, LANES * SPLIT>;
var<workgroup> merge_a: array<f32, LANES>;
var<workgroup> merge_b: array<f32, LANES>;

fn negative_infinity() -> f32 {
  return bitcast<f32>(0xff800000u);
}

// On bits: WGSL lets a compiler assume no float is infinite, so `x == -inf` may fold away.
fn is_negative_infinity(x: f32) -> bool {
  return bitcast<u32>(x) == 0xff800000u;
}

fn q_at(i: u32) -> f32 { return {{load_q}}; }
fn k_at(i: u32) -> f32 { return {{load_k}}; }
fn v_at(i: u32) -> f32 { return {{load_v}}; }
fn dout_at(i: u32) -> f32 { return {{load_dout}}; }

// Which operand row_vec reads.
const Q = 0u;
const K = 1u;
const V = 2u;
const DOUT = 3u;

fn element(operand: u32, i: u32) -> f32 {
  switch operand {
    case 0u: { return q_at(i); }
    case 1u: { return k_at(i); }
    case 2u: { return v_at(i); }
    default: { return dout_at(i); }
  }
}

// Elements 4c .. 4c + 3 of the operand's row at `base`, zeros past the row's length.
fn row_vec(operand: u32, base: u32, c: u32) -> vec4<f32> {
  let length = select(p.qk_dim, p.v_dim, operand >= V);
  var x = vec4<f32>(0.0);
  for (var t = 0u; t < 4u; t++) { let e = 4u * c + t; if (e < length) { x[t] = element(operand, base + e); } }
  return x;
}

fn q_base(b: u32, h: u32, i: u32) -> u32 { return p.q_offset + b * p.q_batch + h * p.q_head + i * p.q_row; }
fn k_base(b: u32, h: u32, j: u32) -> u32 { return p.k_offset + b * p.k_batch + h * p.k_head + j * p.k_row; }
fn v_base(b: u32, h: u32, j: u32) -> u32 { return p.v_offset + b * p.v_batch + h * p.v_head + j * p.v_row; }
fn dout_base(b: u32, h: u32, i: u32) -> u32 {
  return p.dout_offset + b * p.dout_batch + h * p.dout_head + i * p.dout_row;
}
fn out_base(b: u32, h: u32, i: u32) -> u32 {
  return p.out_offset + b * p.out_batch + h * p.out_head + i * p.out_row;
}

// The score of query i and key j (scaled q.k plus the mask), or -inf where a mask hides the key.
fn masked_score(dot_qk: f32, b: u32, h: u32, i: u32, j: u32) -> f32 {
  if (p.causal != 0u && j > i) { return negative_infinity(); }
  var s = dot_qk * p.scale;
  if (p.has_mask != 0u) {
    let m = p.mask_offset + b * p.mask_batch + h * p.mask_head + i * p.mask_row + j * p.mask_col;
    s = s + {{mask_value}};
  }
  return s;
}

// Keys and values of rows start.. into the tiles (zeros past k_len).
fn load_key_tile(lane: u32, b: u32, h: u32, start: u32) {
  for (var x = lane; x < TILE * QK4; x += LANES) {
    let j = start + x / QK4;
    var row = vec4<f32>(0.0);
    if (j < p.k_len) { row = row_vec(K, k_base(b, h, j), x % QK4); }
    tile_a[x] = row;
  }
  for (var x = lane; x < TILE * V4; x += LANES) {
    let j = start + x / V4;
    var row = vec4<f32>(0.0);
    if (j < p.k_len) { row = row_vec(V, v_base(b, h, j), x % V4); }
    tile_b[x] = row;
  }
}

fn dot_a(x: ptr<function, array<vec4<f32>, QK4>>, r: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < QK4; c++) { s += dot((*x)[c], tile_a[r * QK4 + c]); }
  return s;
}

fn dot_b(x: ptr<function, array<vec4<f32>, V4>>, r: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < V4; c++) { s += dot((*x)[c], tile_b[r * V4 + c]); }
  return s;
}

// The (batch, head), the first of the ROWS rows (of `rows`) a workgroup owns, and this thread's row
// and part of it.
struct Block {
  bh: u32,
  b: u32,
  h: u32,
  first: u32,
  row: u32,
  part: u32,
}

fn block_of(group: vec3<u32>, groups: vec3<u32>, lane: u32, rows: u32) -> Block {
  let blocks = (rows + ROWS - 1u) / ROWS;
  let g = flat_group(group, groups);
  let bh = g / blocks;
  let first = (g % blocks) * ROWS;
  return Block(bh, bh / p.heads, bh % p.heads, first, first + lane / SPLIT, lane % SPLIT);
}

// How many keys the queries from first_query see: under the causal mask, none past the last one.
fn keys_seen(first_query: u32) -> u32 {
  if (p.causal == 0u) { return p.k_len; }
  return min(p.k_len, min(first_query + ROWS, p.q_len));
}

// Waits for the threads that share rows. With one thread to a row (SPLIT = 1) each reads back only its
// own merge slots: nothing to wait for, and a barrier is dear where a CPU driver runs the workgroup.
fn merge_barrier() {
  if (SPLIT > 1u) { workgroupBarrier(); }
}

// The sum over this thread's row of each part's `x`, in part order. Every thread calls it (barriers).
fn merged_scalar(lane: u32, x: f32) -> f32 {
  merge_barrier();
  merge_a[lane] = x;
  merge_barrier();
  let first = lane - lane % SPLIT;
  var total = 0.0;
  for (var t = 0u; t < SPLIT; t++) { total += merge_a[first + t]; }
  return total;
}

// One round of summing a row's vectors over its parts: this thread hands in its vec4s c0 ..
// c0 + SPLIT - 1 and gets back the total, in part order, of vec4 c0 + part. Every thread calls it.
fn merged_vec(lane: u32, mine: array<vec4<f32>, SPLIT>) -> vec4<f32> {
  merge_barrier();
  for (var t = 0u; t < SPLIT; t++) { merge_vec[lane * SPLIT + t] = mine[t]; }
  merge_barrier();
  let first = lane - lane % SPLIT;
  var total = vec4<f32>(0.0);
  for (var t = 0u; t < SPLIT; t++) { total += merge_vec[(first + t) * SPLIT + lane % SPLIT]; }
  return total;
}

// What a part's sums (max m, sum l) are multiplied by to meet at the row's max `top`: exactly 1 at the
// max itself (exp(0) may be off by ulps), 0 for a part without a finite score.
fn rescale(m: f32, l: f32, top: f32) -> f32 {
  if (l == 0.0) { return 0.0; }
  return select(exp(m - top), 1.0, m == top);
}

// Elements 4c .. 4c + 3 (those below `length`) of a row of `result` at `base`.
fn store_part(owns_row: bool, base: u32, length: u32, c: u32, x: vec4<f32>) {
  if (!owns_row) { return; }
  for (var e = 4u * c; e < min(4u * c + 4u, length); e++) { result[base + e] = x[e % 4u]; }
}

@compute @workgroup_size(64)
fn forward(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
           @builtin(local_invocation_index) lane: u32) {
  let block = block_of(group, groups, lane, p.q_len);
  if (block.bh >= p.batch_heads) { return; }
  let i = block.row;
  let owns_row = i < p.q_len;
  var qv: array<vec4<f32>, QK4>;
  if (owns_row) {
    for (var c = 0u; c < QK4; c++) { qv[c] = row_vec(Q, q_base(block.b, block.h, i), c); }
  }
  var acc: array<vec4<f32>, V4>;
  var m = negative_infinity();
  var l = 0.0;
  let keys = keys_seen(block.first);
  for (var start = 0u; start < keys; start += TILE) {
    workgroupBarrier();
    load_key_tile(lane, block.b, block.h, start);
    workgroupBarrier();
    let n = min(TILE, keys - start);
    for (var r0 = 0u; r0 < n; r0 += SPLIT) {
      let r = min(r0 + block.part, n - 1u);
      if (!owns_row || r0 + block.part >= n) { continue; }
      let s = masked_score(dot_a(&qv, r), block.b, block.h, i, start + r);
      if (!is_negative_infinity(s)) {
        if (l == 0.0 || s > m) {
          // The first finite score starts the sums (l is 0): what exp(-inf) gives on a driver is unused.
          let shrink = select(exp(m - s), 0.0, l == 0.0);
          l = l * shrink;
          for (var c = 0u; c < V4; c++) { acc[c] = acc[c] * shrink; }
          m = s;
        }
        let weight = exp(s - m);
        l = l + weight;
        for (var c = 0u; c < V4; c++) { acc[c] = acc[c] + weight * tile_b[r * V4 + c]; }
      }
    }
  }
  // The parts meet at the row's largest max; a part that saw no finite score (l = 0) adds nothing.
  merge_barrier();
  merge_a[lane] = m;
  merge_b[lane] = l;
  merge_barrier();
  let first = lane - block.part;
  var top = 0.0;
  var seen = false;
  for (var t = 0u; t < SPLIT; t++) {
    if (merge_b[first + t] != 0.0 && (!seen || merge_a[first + t] > top)) { top = merge_a[first + t]; seen = true; }
  }
  var total = 0.0;
  for (var t = 0u; t < SPLIT; t++) { total += merge_b[first + t] * rescale(merge_a[first + t], merge_b[first + t], top); }
  let own = rescale(m, l, top);
  let inverse = select(1.0 / total, 0.0, total == 0.0);
  let base = out_base(block.b, block.h, i);
  for (var c0 = 0u; c0 < V4; c0 += SPLIT) {
    var mine: array<vec4<f32>, SPLIT>;
    for (var t = 0u; t < SPLIT; t++) { if (c0 + t < V4) { mine[t] = acc[c0 + t] * own; } }
    store_part(owns_row, base, p.v_dim, c0 + block.part, merged_vec(lane, mine) * inverse);
  }
  if (owns_row && block.part == 0u) {
    lse[p.lse_offset + block.bh * p.q_len + i] = select(top + log(total), negative_infinity(), total == 0.0);
  }
}

@compute @workgroup_size(64)
fn backward_query(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) lane: u32) {
  let block = block_of(group, groups, lane, p.q_len);
  if (block.bh >= p.batch_heads) { return; }
  let i = block.row;
  let owns_row = i < p.q_len;
  var qv: array<vec4<f32>, QK4>;
  var dov: array<vec4<f32>, V4>;
  var row_lse = negative_infinity();
  if (owns_row) {
    for (var c = 0u; c < QK4; c++) { qv[c] = row_vec(Q, q_base(block.b, block.h, i), c); }
    for (var c = 0u; c < V4; c++) { dov[c] = row_vec(DOUT, dout_base(block.b, block.h, i), c); }
    row_lse = lse[p.lse_offset + block.bh * p.q_len + i];
  }
  let live = owns_row && !is_negative_infinity(row_lse);
  var dq: array<vec4<f32>, QK4>;
  var delta = 0.0;
  let keys = keys_seen(block.first);
  // Two sweeps over the keys: the first sums delta = rowsum(P * dP), the second dQ. delta from the
  // probabilities, not as rowsum(dO * O) over the stored output, whose rounding to float16 or
  // bfloat16 would cost dQ and dK most of their precision; and where one key takes all the weight,
  // dP - delta is then exactly 0, as in the math path's softmax backward.
  for (var sweep = 0u; sweep < 2u; sweep++) {
    for (var start = 0u; start < keys; start += TILE) {
      workgroupBarrier();
      load_key_tile(lane, block.b, block.h, start);
      workgroupBarrier();
      let n = min(TILE, keys - start);
      for (var r0 = 0u; r0 < n; r0 += SPLIT) {
        let r = min(r0 + block.part, n - 1u);
        if (!live || r0 + block.part >= n) { continue; }
        let s = masked_score(dot_a(&qv, r), block.b, block.h, i, start + r);
        if (!is_negative_infinity(s)) {
          let prob = exp(s - row_lse);
          let dp = dot_b(&dov, r);
          if (sweep == 0u) {
            delta += prob * dp;
          } else {
            let ds = prob * (dp - delta);
            for (var c = 0u; c < QK4; c++) { dq[c] = dq[c] + ds * tile_a[r * QK4 + c]; }
          }
        }
      }
    }
    if (sweep == 0u) { delta = merged_scalar(lane, delta); }
  }
  if (owns_row && block.part == 0u) { result[p.result2_offset + block.bh * p.q_len + i] = delta; }
  let base = p.result_offset + (block.bh * p.q_len + i) * p.qk_dim;
  for (var c0 = 0u; c0 < QK4; c0 += SPLIT) {
    var mine: array<vec4<f32>, SPLIT>;
    for (var t = 0u; t < SPLIT; t++) { if (c0 + t < QK4) { mine[t] = dq[c0 + t]; } }
    store_part(owns_row, base, p.qk_dim, c0 + block.part, merged_vec(lane, mine) * p.scale);
  }
}

@compute @workgroup_size(64)
fn backward_key_value(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                      @builtin(local_invocation_index) lane: u32) {
  let block = block_of(group, groups, lane, p.k_len);
  if (block.bh >= p.batch_heads) { return; }
  let j = block.row;
  let owns_row = j < p.k_len;
  var kv: array<vec4<f32>, QK4>;
  var vv: array<vec4<f32>, V4>;
  if (owns_row) {
    for (var c = 0u; c < QK4; c++) { kv[c] = row_vec(K, k_base(block.b, block.h, j), c); }
    for (var c = 0u; c < V4; c++) { vv[c] = row_vec(V, v_base(block.b, block.h, j), c); }
  }
  var dk: array<vec4<f32>, QK4>;
  var dv: array<vec4<f32>, V4>;
  // Under the causal mask no query before the block's first key sees any of its keys.
  let from_query = select(0u, block.first, p.causal != 0u);
  for (var start = from_query; start < p.q_len; start += TILE) {
    workgroupBarrier();
    for (var x = lane; x < TILE * QK4; x += LANES) {
      let i = start + x / QK4;
      var row = vec4<f32>(0.0);
      if (i < p.q_len) { row = row_vec(Q, q_base(block.b, block.h, i), x % QK4); }
      tile_a[x] = row;
    }
    for (var x = lane; x < TILE * V4; x += LANES) {
      let i = start + x / V4;
      var row = vec4<f32>(0.0);
      if (i < p.q_len) { row = row_vec(DOUT, dout_base(block.b, block.h, i), x % V4); }
      tile_b[x] = row;
    }
    for (var r = lane; r < TILE; r += LANES) {
      let i = min(start + r, p.q_len - 1u);
      tile_lse[r] = lse[p.lse_offset + block.bh * p.q_len + i];
      tile_delta[r] = bitcast<f32>(extra[p.delta_offset + block.bh * p.q_len + i]);
    }
    workgroupBarrier();
    let n = min(TILE, p.q_len - start);
    for (var r0 = 0u; r0 < n; r0 += SPLIT) {
      let r = min(r0 + block.part, n - 1u);
      if (!owns_row || r0 + block.part >= n || is_negative_infinity(tile_lse[r])) { continue; }
      let s = masked_score(dot_a(&kv, r), block.b, block.h, start + r, j);
      if (!is_negative_infinity(s)) {
        let prob = exp(s - tile_lse[r]);
        var dp = 0.0;
        for (var c = 0u; c < V4; c++) {
          dv[c] = dv[c] + prob * tile_b[r * V4 + c];
          dp += dot(tile_b[r * V4 + c], vv[c]);
        }
        let ds = prob * (dp - tile_delta[r]);
        for (var c = 0u; c < QK4; c++) { dk[c] = dk[c] + ds * tile_a[r * QK4 + c]; }
      }
    }
  }
  let k_out = p.result_offset + (block.bh * p.k_len + j) * p.qk_dim;
  for (var c0 = 0u; c0 < QK4; c0 += SPLIT) {
    var mine: array<vec4<f32>, SPLIT>;
    for (var t = 0u; t < SPLIT; t++) { if (c0 + t < QK4) { mine[t] = dk[c0 + t]; } }
    store_part(owns_row, k_out, p.qk_dim, c0 + block.part, merged_vec(lane, mine) * p.scale);
  }
  let v_out = p.result2_offset + (block.bh * p.k_len + j) * p.v_dim;
  for (var c0 = 0u; c0 < V4; c0 += SPLIT) {
    var mine: array<vec4<f32>, SPLIT>;
    for (var t = 0u; t < SPLIT; t++) { if (c0 + t < V4) { mine[t] = dv[c0 + t]; } }
    store_part(owns_row, v_out, p.v_dim, c0 + block.part, merged_vec(lane, mine));
  }
}
