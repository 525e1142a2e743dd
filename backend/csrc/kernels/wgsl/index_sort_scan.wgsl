// Counting sort of positions by index, step 2: the first slot of each group, the exclusive prefix sum
// of the counts. One workgroup: each thread sums a stretch of the counts, the workgroup scans those
// sums, and each thread writes its stretch's prefixes (integer arithmetic: the order is irrelevant).
struct Params {
  buckets: u32,
  counts_offset: u32,
  starts_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> starts: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> sums: array<u32, {{workgroup_size}}>;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(local_invocation_index) lid: u32) {
  let stretch = (p.buckets + {{workgroup_size}}u - 1u) / {{workgroup_size}}u;
  let begin = min(lid * stretch, p.buckets);
  let end = min(begin + stretch, p.buckets);
  var sum = 0u;
  for (var b = begin; b < end; b++) { sum = sum + counts[p.counts_offset + b]; }
  sums[lid] = sum;
  workgroupBarrier();
  for (var step = 1u; step < {{workgroup_size}}u; step = step << 1u) {
    var v = sums[lid];
    if (lid >= step) { v = v + sums[lid - step]; }
    workgroupBarrier();
    sums[lid] = v;
    workgroupBarrier();
  }
  var start = sums[lid] - sum;
  for (var b = begin; b < end; b++) {
    starts[p.starts_offset + b] = start;
    start = start + counts[p.counts_offset + b];
  }
}
