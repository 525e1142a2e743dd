// One merge pass of the long-row sort: pairs of sorted runs of `run` elements (keys with their row
// positions, from sort_runs.wgsl or the previous pass) become sorted runs of 2 * `run`. Each element
// finds its place by itself: its rank in its own run plus the number of elements of the partner run
// that go before it, found by binary search. The left run holds the lower positions, so among equal
// keys its elements go first (the partner's equal keys count for a right-run element, not for a
// left-run one): the merge keeps the stable order, and every thread writes one distinct slot. A merged
// pair keeps its first `keep` elements only (topk: the rest can never reach the first k), so the row
// shrinks to `out_length`. The last pass writes the positions as int64 to `out` instead.
//! include lib/grid.wgsl

struct Params {
  rows: u32,
  length: u32,
  run: u32,              // the sorted runs' length (the last run of a row may be shorter)
  last: u32,             // 1: write int64 positions to `out`
  keep: u32,             // elements kept of each merged pair: 2 * run, or fewer for topk
  out_length: u32,       // the output row's length
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

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let e = flat_thread(gid, groups, {{workgroup_size}}u);
  if (e >= p.rows * p.length) { return; }
  let row = e / p.length;
  let base = row * p.length;
  let i = e - base;
  let start = i / p.run * p.run;
  let left = (i / p.run) % 2u == 0u;
  let key = keys_in[p.keys_in_offset + e];
  var rank = i - start;
  let partner = select(start - p.run, start + p.run, left);
  if (partner < p.length) {
    var low = partner;
    var high = min(partner + p.run, p.length);
    while (low < high) {
      let middle = (low + high) / 2u;
      let other = keys_in[p.keys_in_offset + base + middle];
      if (other < key || (!left && other == key)) { low = middle + 1u; } else { high = middle; }
    }
    rank += low - partner;
  }
  if (rank >= p.keep) { return; }
  let slot = row * p.out_length + i / (2u * p.run) * p.keep + rank;
  let position = positions_in[p.positions_in_offset + e];
  if (p.last != 0u) {
    out[p.out_offset + slot] = i64(position);
  } else {
    keys_out[p.keys_out_offset + slot] = key;
    positions_out[p.positions_out_offset + slot] = position;
  }
}
