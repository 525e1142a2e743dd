// Order-preserving unsigned key of a float64 (as sort_key_f32.wgsl, on 64 bits).
fn sort_key(v: f64) -> u64 {
  var u = bitcast<u64>(v);
  if ((u & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu) { return 0xfffffffffffffffflu; }
  if (u == 0x8000000000000000lu) { u = 0lu; }
  if ((u & 0x8000000000000000lu) != 0lu) { return ~u; }
  return u | 0x8000000000000000lu;
}
