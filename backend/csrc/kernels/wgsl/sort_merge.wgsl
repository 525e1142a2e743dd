// One merge pass of the long-row sort: pairs of sorted runs of `run` elements (keys with their row
// positions, from sort_runs.wgsl or the previous pass) become sorted runs of 2 * `run`. Merge path:
// each thread writes kChunk consecutive outputs of a merged pair; a binary search along its first
// output's diagonal finds how many of the outputs before it come from the left run A, then it merges
// sequentially. A's elements hold the lower positions, so among equal keys they go first (A[i] <= B[j]
// takes A): the merge keeps the stable order. A merged pair keeps its first `keep` elements only
// (topk: the rest can never reach the first k), so the row shrinks to `out_length`. The last pass
// writes the positions as int64 to `out` instead. Against one binary search per element this does
// about log2(run) / kChunk searches per output: 2-3x faster on lavapipe.
//! include lib/grid.wgsl

struct Params {
  rows: u32,
  length: u32,
  run: u32,              // the sorted runs' length (the last run of a row may be shorter)
  last: u32,             // 1: write int64 positions to `out`
  keep: u32,             // elements kept of each merged pair: 2 * run, or fewer for topk
  out_length: u32,       // the output row's length
  chunks: u32,           // threads per merged pair: keep / kChunk, rounded up
  keys_in_offset: u32,
  positions_in_offset: u32,
  keys_out_offset: u32,
  positions_out_offset: u32,
  out_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> keys_in: array<{{key}}>;
@group(0) @binding(1) var<storage, read_write> positions_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys_out: array<{{key}}>;
@group(0) @binding(3) var<storage, read_write> positions_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<i64>;
@group(0) @binding(5) var<uniform> p: Params;

const kChunk = {{chunk}}u;

fn key_in(i: u32) -> {{key}} {
  return keys_in[p.keys_in_offset + i];
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  let pairs = (p.length + 2u * p.run - 1u) / (2u * p.run);
  if (t >= p.rows * pairs * p.chunks) { return; }
  let row = t / (pairs * p.chunks);
  let pair = (t - row * pairs * p.chunks) / p.chunks;
  let first = (t - row * pairs * p.chunks - pair * p.chunks) * kChunk;
  let a = row * p.length + pair * 2u * p.run;
  let a_length = min(p.run, p.length - pair * 2u * p.run);
  let b = a + a_length;
  let b_length = min(p.run, p.length - pair * 2u * p.run - a_length);
  let end = min(min(first + kChunk, a_length + b_length), p.keep);
  if (first >= end) { return; }
  // The fewest of A among the first `first` outputs such that A's next element goes after B's last one.
  var low = select(0u, first - b_length, first > b_length);
  var high = min(first, a_length);
  while (low < high) {
    let middle = (low + high) / 2u;
    if (key_in(a + middle) <= key_in(b + first - middle - 1u)) { low = middle + 1u; } else { high = middle; }
  }
  var i = low;
  var j = first - low;
  let out_base = row * p.out_length + pair * p.keep;
  for (var rank = first; rank < end; rank++) {
    var from_a = j >= b_length;
    if (!from_a && i < a_length) { from_a = key_in(a + i) <= key_in(b + j); }
    let source = select(b + j, a + i, from_a);
    if (from_a) { i++; } else { j++; }
    let position = positions_in[p.positions_in_offset + source];
    if (p.last != 0u) {
      out[p.out_offset + out_base + rank] = i64(position);
    } else {
      keys_out[p.keys_out_offset + out_base + rank] = key_in(source);
      positions_out[p.positions_out_offset + out_base + rank] = position;
    }
  }
}
