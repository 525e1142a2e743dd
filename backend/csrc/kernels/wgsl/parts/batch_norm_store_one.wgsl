// batch_norm_apply.wgsl's store for dtypes of 4 or 8 bytes: v[0..3] to elements first..first+3 below
// p.total.
  for (var i = 0u; i < 4u; i++) {
    if (first + i < p.total) { out[p.out_offset + first + i] = stored(v[i]); }
  }
