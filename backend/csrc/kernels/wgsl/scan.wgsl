// Inclusive scans along contiguous rows (cumsum, cumprod, logcumsumexp): one workgroup per row walks it
// a tile of {{workgroup_size}} elements at a time, scans the tile in workgroup memory (Hillis-Steele:
// log2 steps, each lane combining with the lane s before it) and carries the tile's total into the next.
// The combination order is fixed by the row length alone, so results are the same on every run and
// every driver; they differ from the CPU's strictly sequential sum only by rounding.
//! include lib/grid.wgsl

struct Params {
  rows: u32,
  length: u32,
  src_offset: u32,
  out_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> src: {{src_array}};
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> tile: array<{{acc}}, {{workgroup_size}}>;

{{helpers}}

fn combine(a: {{acc}}, b: {{acc}}) -> {{acc}} {
  return {{combine}};
}

fn load(i: u32) -> {{acc}} {
  return {{load}};
}

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = row * p.length;
  var carry: {{acc}} = {{identity}};
  for (var start = 0u; start < p.length; start += {{workgroup_size}}u) {
    let i = start + lane;
    var v: {{acc}} = {{identity}};
    if (i < p.length) { v = load(p.src_offset + base + i); }
    tile[lane] = v;
    workgroupBarrier();
    for (var s = 1u; s < {{workgroup_size}}u; s = s << 1u) {
      var before: {{acc}} = {{identity}};
      if (lane >= s) { before = tile[lane - s]; }
      workgroupBarrier();
      if (lane >= s) { tile[lane] = combine(before, tile[lane]); }
      workgroupBarrier();
    }
    if (i < p.length) { out[p.out_offset + base + i] = combine(carry, tile[lane]); }
    carry = combine(carry, tile[{{workgroup_size}}u - 1u]);
    workgroupBarrier();
  }
}
