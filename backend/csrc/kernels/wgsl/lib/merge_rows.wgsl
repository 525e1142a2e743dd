// The in-workgroup sort of the row sorts (sort.wgsl, sort_runs.wgsl): `width` keys in `keys` and their
// positions in `slots`, sorted by key and then by position. A merge sort: each pass merges pairs of
// sorted runs, every element moving to its rank in its own run plus the count of the partner run's
// elements that go before it (binary search; the left run's elements go first among equal keys, so
// the order is stable). Against a bitonic network it takes log2(width) barrier pairs instead of
// log2(width)^2 / 2 stages, and about half the time on lavapipe. Slots past the real elements hold the
// largest key (pad_key()) and positions past theirs, so they sort last with no test of their own.
// `width` (a power of two, at most {{capacity}}) must be uniform: passes synchronise the workgroup.

var<workgroup> keys: array<{{key}}, {{capacity}}>;
var<workgroup> slots: array<u32, {{capacity}}>;

const kPerLane = {{capacity}}u / {{workgroup_size}}u;

fn pad_key() -> {{key}} {
  return ~{{key}}(0);
}

fn merge_sort(lane: u32, width: u32) {
  var moved_keys: array<{{key}}, kPerLane>;
  var moved_slots: array<u32, kPerLane>;
  var moved_to: array<u32, kPerLane>;
  for (var run = 1u; run < width; run = run << 1u) {
    var t = 0u;
    for (var i = lane; i < width; i += {{workgroup_size}}u) {
      let key = keys[i];
      let start = i & ~(run - 1u);
      let left = (i & run) == 0u;
      let partner = start ^ run;
      var low = partner;
      var high = partner + run;
      while (low < high) {
        let middle = (low + high) >> 1u;
        let other = keys[middle];
        if (other < key || (!left && other == key)) { low = middle + 1u; } else { high = middle; }
      }
      moved_keys[t] = key;
      moved_slots[t] = slots[i];
      moved_to[t] = min(start, partner) + (i - start) + (low - partner);
      t++;
    }
    // Every thread has read its elements' partners before any element moves.
    workgroupBarrier();
    t = 0u;
    for (var i = lane; i < width; i += {{workgroup_size}}u) {
      keys[moved_to[t]] = moved_keys[t];
      slots[moved_to[t]] = moved_slots[t];
      t++;
    }
    workgroupBarrier();
  }
}
