// First step of the sort of rows longer than one workgroup holds (sort.wgsl has the keys): each
// workgroup sorts one run of up to {{capacity}} consecutive elements of a row (lib/merge_rows.wgsl) and
// writes the run's keys and their positions in the row, for sort_merge.wgsl to merge: its first `keep`
// (all {{capacity}}, or fewer for topk) at `keep` elements per run.
//! include lib/grid.wgsl
//! include lib/merge_rows.wgsl
//! include lib/sort_key_at.wgsl

struct Params {
  rows: u32,
  length: u32,           // the row's length
  runs: u32,             // runs per row: length / {{capacity}}, rounded up
  descending: u32,
  src_offset: u32,
  keys_offset: u32,
  positions_offset: u32,
  keep: u32,             // elements written per run
  out_length: u32,       // the output row's length
}

@group(0) @binding(0) var<storage, read_write> keys_out: array<{{key}}>;
@group(0) @binding(1) var<storage, read_write> positions_out: array<u32>;
@group(0) @binding(2) var<storage, read_write> src: {{src_array}};
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let run = flat_group(group, groups);
  if (run >= p.rows * p.runs) { return; }
  let row = run / p.runs;
  let first = (run - row * p.runs) * {{capacity}}u;
  let count = min({{capacity}}u, p.length - first);
  let base = row * p.length + first;
  for (var i = lane; i < {{capacity}}u; i += {{workgroup_size}}u) {
    slots[i] = i;
    keys[i] = pad_key();
    if (i < count) { keys[i] = key_at(p.src_offset + base + i); }
  }
  workgroupBarrier();
  merge_sort(lane, {{capacity}}u);
  let out_base = row * p.out_length + (run - row * p.runs) * p.keep;
  for (var i = lane; i < min(count, p.keep); i += {{workgroup_size}}u) {
    keys_out[p.keys_offset + out_base + i] = keys[i];
    positions_out[p.positions_offset + out_base + i] = first + slots[i];
  }
}
