// Row sort (sort, argsort, topk): one workgroup sorts a row of up to {{capacity}} elements in workgroup
// memory (lib/merge_rows.wgsl) and writes the permutation (the values follow by a gather); longer rows
// go through sort_runs.wgsl and sort_merge.wgsl. Elements compare as unsigned integer keys made from
// their bits: order-preserving for floats (-0.0 folded onto 0.0, every NaN made the largest key, as
// PyTorch orders them) and for integers, and inverted for a descending sort. Ties keep index order, so
// the result is the stable order, and no comparison depends on how a driver treats NaN or infinities.
//! include lib/grid.wgsl
//! include lib/merge_rows.wgsl
//! include lib/sort_key_at.wgsl

struct Params {
  rows: u32,
  length: u32,      // at most {{capacity}}
  width: u32,       // the network's width: length rounded up to a power of two
  descending: u32,
  src_offset: u32,
  out_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<i64>;
@group(0) @binding(1) var<storage, read_write> src: {{src_array}};
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = row * p.length;
  for (var i = lane; i < p.width; i += {{workgroup_size}}u) {
    slots[i] = i;
    keys[i] = pad_key();
    if (i < p.length) { keys[i] = key_at(p.src_offset + base + i); }
  }
  workgroupBarrier();
  merge_sort(lane, p.width);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    out[p.out_offset + base + i] = i64(slots[i]);
  }
}
