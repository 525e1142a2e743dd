// The group a position of an index tensor falls in, for the counting sort of positions by index
// (index_sort_*.wgsl, which declare `index: array<u32>` and the Params fields read here). Indices are
// read as 32-bit words, two per int64 index (low word first), so int64 indices need no shader-int64.
// Indices outside [0, buckets) and the skipped one (embedding's padding_idx) are in no group.

const NO_BUCKET: u32 = 0xFFFFFFFFu;

fn bucket_at(i: u32) -> u32 {
  let at = p.index_offset + i * p.index_words;
  var high = 0u; // 0 for int32 indices and for non-negative int64 ones
  if (p.index_words == 2u) { high = index[at + 1u]; }
  let low = index[at];
  if (high != 0u || low >= p.buckets || low == p.skip) { return NO_BUCKET; }
  return low;
}
