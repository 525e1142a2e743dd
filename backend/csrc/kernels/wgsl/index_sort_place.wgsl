// Counting sort of positions by index, step 3: stable placement. Atomics would place the positions of
// one group in whatever order the threads arrive, and the sums over a group (embedding backward,
// index_add) would then change with the scheduling. So one workgroup walks the positions in chunks of
// its size, in order: a position's slot is its group's cursor plus the number of earlier positions of
// the chunk in the same group, and the chunk's last position of each group moves the cursor on.
// `cursor` enters holding each group's first slot (index_sort_scan) and leaves holding its end.
//! include lib/index_bucket.wgsl

struct Params {
  positions: u32,
  buckets: u32,
  skip: u32,
  index_words: u32,
  index_offset: u32,  // words
  cursor_offset: u32,
  order_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> order: array<u32>;
@group(0) @binding(1) var<storage, read_write> cursor: array<u32>;
@group(0) @binding(2) var<storage, read_write> index: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> chunk: array<u32, {{workgroup_size}}>;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(local_invocation_index) lid: u32) {
  for (var base = 0u; base < p.positions; base = base + {{workgroup_size}}u) {
    let i = base + lid;
    var bucket = NO_BUCKET;
    if (i < p.positions) { bucket = bucket_at(i); }
    chunk[lid] = bucket;
    workgroupBarrier();
    var rank = 0u;
    var last = true;
    if (bucket != NO_BUCKET) {
      for (var j = 0u; j < {{workgroup_size}}u; j++) {
        if (chunk[j] == bucket) {
          if (j < lid) { rank = rank + 1u; } else if (j > lid) { last = false; }
        }
      }
      order[p.order_offset + cursor[p.cursor_offset + bucket] + rank] = i;
    }
    // Every thread has read its group's cursor before any cursor moves, and every move is visible
    // before the next chunk reads them.
    storageBarrier();
    workgroupBarrier();
    if (bucket != NO_BUCKET && last) {
      cursor[p.cursor_offset + bucket] = cursor[p.cursor_offset + bucket] + rank + 1u;
    }
    storageBarrier();
    workgroupBarrier();
  }
}
