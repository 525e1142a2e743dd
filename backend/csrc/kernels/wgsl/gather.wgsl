// Row gather (index_select, embedding): out[a, i, :] = self[a, index[i], :] over contiguous views,
// moving whole 32-bit words, so every dtype whose rows are whole words is served. One thread per
// output word; the caller has checked the indices are in range.
//! include lib/grid.wgsl

struct Params {
  total_words: u32,  // outer * count * row_words
  row_words: u32,
  count: u32,        // indices
  source_rows: u32,  // size of the indexed dimension of self
  out_offset: u32,   // words
  self_offset: u32,  // words
  index_offset: u32, // indices
}

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read_write> self_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> index: array<{{index_type}}>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size({{workgroup_size}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, {{workgroup_size}}u);
  if (t >= p.total_words) { return; }
  let word = t % p.row_words;
  let row = t / p.row_words;
  let i = row % p.count;
  let a = row / p.count;
  let source_row = u32(index[p.index_offset + i]);
  out[p.out_offset + t] = self_words[p.self_offset + (a * p.source_rows + source_row) * p.row_words + word];
}
