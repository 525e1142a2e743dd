// Assignment at linear positions, out.flatten()[index[i]] = src[i], for any dtype by moving bits. Where
// positions repeat (PyTorch leaves the result undefined) a serial loop's rule holds: the last write, the
// largest i, wins. Two entry points:
// `claim` makes each position's winner the largest i that names it, with atomicMax (a maximum does not
// depend on the order threads run in, so the result is the same on every adapter and every run);
// `put` then writes each output word once, lane by lane as take.wgsl does, keeping the elements no
// index names. `winner` is int32, -1 where unclaimed (filled by the caller).
//! include lib/grid.wgsl
//! include lib/bit_lanes.wgsl

struct Params {
  count: u32,       // elements of out
  words: u32,       // output words `put` writes
  sources: u32,     // elements of src and index
  out_offset: u32,  // first output element within its window (a whole word for sub-word dtypes)
  src_offset: u32,  // first source element within its window
  index_offset: u32,
  winner_offset: u32,
}

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read_write> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> index: array<{{index_type}}>;
@group(0) @binding(3) var<storage, read_write> winner: array<atomic<i32>>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn claim(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = flat_thread(gid, groups, {{workgroup_size}}u);
  if (i >= p.sources) { return; }
  let position = u32(index[p.index_offset + i]);
  atomicMax(&winner[p.winner_offset + position], i32(i));
}

@compute @workgroup_size({{workgroup_size}})
fn put(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.words) { return; }
  if (WIDE) {
    let writer = atomicLoad(&winner[p.winner_offset + (t >> 1u)]);
    if (writer >= 0) {
      out[p.out_offset * 2u + t] = src[(p.src_offset + u32(writer)) * 2u + (t & 1u)];
    }
    return;
  }
  let lanes = 1u << LANES_LOG2;
  let bits = 32u >> LANES_LOG2;
  let w = (p.out_offset >> LANES_LOG2) + t;
  let first = t << LANES_LOG2;
  var word = out[w];
  var changed = false;
  for (var j = 0u; j < lanes; j++) {
    let e = first + j;
    if (e >= p.count) { break; }
    let writer = atomicLoad(&winner[p.winner_offset + e]);
    if (writer < 0) { continue; }
    word = insertBits(word, src_element(p.src_offset + u32(writer)), j * bits, bits);
    changed = true;
  }
  if (changed) { out[w] = word; }
}
