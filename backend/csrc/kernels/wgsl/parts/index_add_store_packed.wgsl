// index_add.wgsl's store for 1- and 2-byte dtypes: one u32 word of LANES elements per thread. The last
// word of a count that does not fill it keeps the bits past the tensor.
  let bits = 32u / LANES;
  let e = LANES * t;
  let w = p.out_offset / LANES + t;
  var word = stored(e);
  for (var k = 1u; k < LANES; k++) {
    if (e + k < p.elements) {
      word = word | (stored(e + k) << (k * bits));
    } else {
      word = word | (out[w] & (((1u << bits) - 1u) << (k * bits)));
    }
  }
  out[w] = word;
