// Stream compaction (nonzero, masked_select): given the inclusive running count of a mask (a scan),
// element i is set exactly where the count steps up there, and its output slot is the count minus one.
// Every slot has one writer, so the result is the same on every run.
//! include lib/grid.wgsl

struct Params {
  count: u32,        // mask elements
  running_offset: u32,
  out_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<i64>;
@group(0) @binding(1) var<storage, read_write> running: array<i64>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = flat_thread(gid, groups, {{workgroup_size}}u);
  if (i >= p.count) { return; }
  let here = running[p.running_offset + i];
  var before = i64(0);
  if (i > 0u) { before = running[p.running_offset + i - 1u]; }
  if (here > before) {
    // Through u64: naga sign-extends i64(u32), which would turn positions from 2^31 on negative.
    out[p.out_offset + u32(here - 1)] = bitcast<i64>(u64(i));
  }
}
