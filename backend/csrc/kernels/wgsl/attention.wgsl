// Fused scaled-dot-product attention, forward and backward, for (batch * heads) problems whose rows
// are a query of length `qk_dim` (keys the same) and a value of length `v_dim`, each at most 128.
//
// A thread owns one row (a query in `forward` and `backward_query`, a key in `backward_key_value`), a
// workgroup 64 consecutive rows of one (batch, head); the other side's rows pass through workgroup
// memory in tiles of {{tile_rows}} rows, zero-padded to whole vec4s, so each row's arithmetic is over
// constant lengths the compiler can unroll. All arithmetic in f32, whatever the storage dtype.
//
// forward: an online softmax over keys, one key at a time in key order: the running max `m` and sum
// `l` rescale the accumulator only when the max grows. Writes the output and logsumexp = m + log(l).
// backward_query: recomputes each probability from the saved logsumexp, writes dQ and
// delta = rowsum(P * dP); backward_key_value (dispatched after it) reads delta and writes dK and dV.
// Each output is one thread's sum in a fixed order: no atomics, the same bits on every run.
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

const BLOCK = 64u;
const QK4 = {{qk_vec4s}}u;
const V4 = {{v_vec4s}}u;
const TILE = {{tile_rows}}u;

var<workgroup> tile_a: array<vec4<f32>, {{tile_a_size}}>; // rows of qk_dim: keys, or queries
var<workgroup> tile_b: array<vec4<f32>, {{tile_b_size}}>; // rows of v_dim: values, or dO
var<workgroup> tile_lse: array<f32, {{tile_rows}}>;
var<workgroup> tile_delta: array<f32, {{tile_rows}}>;

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

// The additive mask of query i and key j (0 without a mask).
fn mask_at(b: u32, h: u32, i: u32, j: u32) -> f32 {
  if (p.has_mask == 0u) { return 0.0; }
  let m = p.mask_offset + b * p.mask_batch + h * p.mask_head + i * p.mask_row + j * p.mask_col;
  return {{mask_value}};
}

// Keys and values of rows start.. into the tiles (zeros past k_len).
fn load_key_tile(lane: u32, b: u32, h: u32, start: u32) {
  for (var x = lane; x < TILE * QK4; x += BLOCK) {
    let j = start + x / QK4;
    var row = vec4<f32>(0.0);
    if (j < p.k_len) { row = row_vec(K, k_base(b, h, j), x % QK4); }
    tile_a[x] = row;
  }
  for (var x = lane; x < TILE * V4; x += BLOCK) {
    let j = start + x / V4;
    var row = vec4<f32>(0.0);
    if (j < p.k_len) { row = row_vec(V, v_base(b, h, j), x % V4); }
    tile_b[x] = row;
  }
}

fn score(qv: ptr<function, array<vec4<f32>, QK4>>, r: u32) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < QK4; c++) { s += dot((*qv)[c], tile_a[r * QK4 + c]); }
  return s * p.scale;
}

// How many keys the 64 queries from first_query see: under the causal mask, none past the last one.
// The (batch, head) and the first of the 64 rows (of `rows`) a workgroup owns.
struct Block {
  bh: u32,
  b: u32,
  h: u32,
  first: u32,
}

fn block_of(group: vec3<u32>, groups: vec3<u32>, rows: u32) -> Block {
  let blocks = (rows + BLOCK - 1u) / BLOCK;
  let g = flat_group(group, groups);
  let bh = g / blocks;
  return Block(bh, bh / p.heads, bh % p.heads, (g % blocks) * BLOCK);
}

fn keys_seen(first_query: u32) -> u32 {
  if (p.causal == 0u) { return p.k_len; }
  return min(p.k_len, min(first_query + BLOCK, p.q_len));
}

@compute @workgroup_size(64)
fn forward(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
           @builtin(local_invocation_index) lane: u32) {
  let block = block_of(group, groups, p.q_len);
  if (block.bh >= p.batch_heads) { return; }
  let i = block.first + lane;
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
    if (owns_row) {
      let n = min(TILE, keys - start);
      for (var r = 0u; r < n; r++) {
        let j = start + r;
        if (p.causal != 0u && j > i) { break; }
        let s = score(&qv, r) + mask_at(block.b, block.h, i, j);
        if (is_negative_infinity(s)) { continue; }
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
  if (!owns_row) { return; }
  let base = out_base(block.b, block.h, i);
  let inverse = select(1.0 / l, 0.0, l == 0.0);
  for (var e = 0u; e < p.v_dim; e++) { result[base + e] = acc[e / 4u][e % 4u] * inverse; }
  lse[p.lse_offset + block.bh * p.q_len + i] = select(m + log(l), negative_infinity(), l == 0.0);
}

@compute @workgroup_size(64)
fn backward_query(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                  @builtin(local_invocation_index) lane: u32) {
  let block = block_of(group, groups, p.q_len);
  if (block.bh >= p.batch_heads) { return; }
  let i = block.first + lane;
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
      if (live) {
        let n = min(TILE, keys - start);
        for (var r = 0u; r < n; r++) {
          let j = start + r;
          if (p.causal != 0u && j > i) { break; }
          let s = score(&qv, r) + mask_at(block.b, block.h, i, j);
          if (is_negative_infinity(s)) { continue; }
          let prob = exp(s - row_lse);
          var dp = 0.0;
          for (var c = 0u; c < V4; c++) { dp += dot(dov[c], tile_b[r * V4 + c]); }
          if (sweep == 0u) {
            delta += prob * dp;
          } else {
            let ds = prob * (dp - delta);
            for (var c = 0u; c < QK4; c++) { dq[c] = dq[c] + ds * tile_a[r * QK4 + c]; }
          }
        }
      }
    }
  }
  if (owns_row) { result[p.result2_offset + block.bh * p.q_len + i] = delta; }
  if (!owns_row) { return; }
  let base = p.result_offset + (block.bh * p.q_len + i) * p.qk_dim;
  for (var e = 0u; e < p.qk_dim; e++) { result[base + e] = dq[e / 4u][e % 4u] * p.scale; }
}

@compute @workgroup_size(64)
fn backward_key_value(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                      @builtin(local_invocation_index) lane: u32) {
  let block = block_of(group, groups, p.k_len);
  if (block.bh >= p.batch_heads) { return; }
  let j = block.first + lane;
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
    for (var x = lane; x < TILE * QK4; x += BLOCK) {
      let i = start + x / QK4;
      var row = vec4<f32>(0.0);
      if (i < p.q_len) { row = row_vec(Q, q_base(block.b, block.h, i), x % QK4); }
      tile_a[x] = row;
    }
    for (var x = lane; x < TILE * V4; x += BLOCK) {
      let i = start + x / V4;
      var row = vec4<f32>(0.0);
      if (i < p.q_len) { row = row_vec(DOUT, dout_base(block.b, block.h, i), x % V4); }
      tile_b[x] = row;
    }
    for (var r = lane; r < TILE; r += BLOCK) {
      let i = min(start + r, p.q_len - 1u);
      tile_lse[r] = lse[p.lse_offset + block.bh * p.q_len + i];
      tile_delta[r] = bitcast<f32>(extra[p.delta_offset + block.bh * p.q_len + i]);
    }
    workgroupBarrier();
    if (owns_row) {
      let n = min(TILE, p.q_len - start);
      for (var r = 0u; r < n; r++) {
        let i = start + r;
        if ((p.causal != 0u && i < j) || is_negative_infinity(tile_lse[r])) { continue; }
        var s = 0.0;
        for (var c = 0u; c < QK4; c++) { s += dot(tile_a[r * QK4 + c], kv[c]); }
        s = s * p.scale + mask_at(block.b, block.h, i, j);
        if (is_negative_infinity(s)) { continue; }
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
  if (!owns_row) { return; }
  let k_out = p.result_offset + (block.bh * p.k_len + j) * p.qk_dim;
  for (var e = 0u; e < p.qk_dim; e++) { result[k_out + e] = dk[e / 4u][e % 4u] * p.scale; }
  let v_out = p.result2_offset + (block.bh * p.k_len + j) * p.v_dim;
  for (var e = 0u; e < p.v_dim; e++) { result[v_out + e] = dv[e / 4u][e % 4u]; }
}
