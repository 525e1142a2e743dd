// Counting sort of positions by index, step 1: how many positions hold each index (an atomic u32
// histogram; integer sums do not depend on the order the atomics land in).
//! include lib/grid.wgsl
//! include lib/index_bucket.wgsl

struct Params {
  positions: u32,
  buckets: u32,
  skip: u32,         // an index left out of every group, or NO_BUCKET
  index_words: u32,  // words per index: 1 (int32) or 2 (int64)
  index_offset: u32, // words
  counts_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> index: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = flat_thread(gid, groups, {{workgroup_size}}u);
  if (i >= p.positions) { return; }
  let bucket = bucket_at(i);
  if (bucket != NO_BUCKET) { atomicAdd(&counts[p.counts_offset + bucket], 1u); }
}
