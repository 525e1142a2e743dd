// The in-workgroup bitonic network of the row sorts (sort.wgsl, sort_runs.wgsl): `count` keys in
// `keys`, their positions in `slots`, sorted by key and then by position. Ties going to the lower
// position make the network's unstable exchanges give the stable order; slots at or past `count` are
// padding and sort last. `width` (a power of two, at most {{capacity}}) and `count` must be uniform:
// the network synchronises the workgroup between its stages.

var<workgroup> keys: array<{{key}}, {{capacity}}>;
var<workgroup> slots: array<u32, {{capacity}}>;

fn before(a: u32, b: u32, count: u32) -> bool {
  let ia = slots[a];
  let ib = slots[b];
  if (ia >= count || ib >= count) { return ia < ib; }
  if (keys[a] != keys[b]) { return keys[a] < keys[b]; }
  return ia < ib;
}

fn bitonic_sort(lane: u32, width: u32, count: u32) {
  for (var k = 2u; k <= width; k = k << 1u) {
    for (var j = k >> 1u; j > 0u; j = j >> 1u) {
      for (var i = lane; i < width; i += {{workgroup_size}}u) {
        let l = i ^ j;
        if (l > i) {
          let ascending = (i & k) == 0u;
          if (before(l, i, count) == ascending) {
            let key = keys[i];
            keys[i] = keys[l];
            keys[l] = key;
            let slot = slots[i];
            slots[i] = slots[l];
            slots[l] = slot;
          }
        }
      }
      workgroupBarrier();
    }
  }
}
