// index_add.wgsl's store for dtypes of 4 or 8 bytes: one element of out per thread.
  out[p.out_offset + t] = stored(t);
