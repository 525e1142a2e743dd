// Order-preserving unsigned key of a float32 (what the sort family's key_function hole takes): negative floats
// reversed below the positives, -0 as +0 (a stable sort keeps their order), every NaN last.
fn sort_key(v: f32) -> u32 {
  var u = bitcast<u32>(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
  if (u == 0x80000000u) { u = 0u; }
  if ((u & 0x80000000u) != 0u) { return ~u; }
  return u | 0x80000000u;
}
