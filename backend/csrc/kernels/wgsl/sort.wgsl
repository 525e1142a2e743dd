// Row sort (sort, argsort, topk): one workgroup sorts a row of up to {{capacity}} elements in workgroup
// memory with a bitonic network and writes the permutation (the values follow by a gather). Elements
// compare as unsigned integer keys made from their bits: order-preserving for floats (-0.0 folded
// onto 0.0, every NaN made the largest key, as PyTorch orders them) and for integers, and inverted for
// a descending sort. Ties go to the lower index, so the network's result is the stable order, and no
// comparison depends on how a driver treats NaN or infinities.
//! include lib/grid.wgsl

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

var<workgroup> keys: array<{{key}}, {{capacity}}>;
var<workgroup> slots: array<u32, {{capacity}}>;

{{key_function}}

fn key_at(i: u32) -> {{key}} {
  let v = {{load}};
  let k = {{key_of_v}};
  if (p.descending != 0u) { return ~k; }
  return k;
}

// Whether slot a's element goes before slot b's: padding (index >= length) last, then by key, then by index.
fn before(a: u32, b: u32) -> bool {
  let ia = slots[a];
  let ib = slots[b];
  if (ia >= p.length || ib >= p.length) { return ia < ib; }
  if (keys[a] != keys[b]) { return keys[a] < keys[b]; }
  return ia < ib;
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = row * p.length;
  for (var i = lane; i < p.width; i += {{workgroup_size}}u) {
    slots[i] = i;
    if (i < p.length) { keys[i] = key_at(p.src_offset + base + i); }
  }
  workgroupBarrier();
  for (var k = 2u; k <= p.width; k = k << 1u) {
    for (var j = k >> 1u; j > 0u; j = j >> 1u) {
      for (var i = lane; i < p.width; i += {{workgroup_size}}u) {
        let l = i ^ j;
        if (l > i) {
          let ascending = (i & k) == 0u;
          if (before(l, i) == ascending) {
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
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    out[p.out_offset + base + i] = i64(slots[i]);
  }
}
