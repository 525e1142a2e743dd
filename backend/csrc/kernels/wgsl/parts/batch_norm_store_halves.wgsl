// batch_norm_apply.wgsl's store for 2-byte dtypes: v[0..3] as the two u32 words of elements
// first..first+3; the word of the last element below p.total keeps 0 in its upper half.
  for (var w = 0u; w < 2u; w++) {
    let e = first + 2u * w;
    if (e >= p.total) { break; }
    var word = stored(v[2u * w]);
    if (e + 1u < p.total) { word = word | (stored(v[2u * w + 1u]) << 16u); }
    out[p.out_offset + e / 2u] = word;
  }
