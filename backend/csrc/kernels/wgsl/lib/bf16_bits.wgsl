// The bits of an f32 rounded to bfloat16 (in the low half of a u32): round to nearest even, NaN to the
// canonical quiet NaN, as c10::BFloat16's conversion does, so a stored bf16 matches the CPU's. Any
// family whose destination may be bf16 includes it; store_form() names it.
fn bf16_bits(v: f32) -> u32 {
  let u = bitcast<u32>(v);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) { return 0x7FC0u; }
  return (u + 0x7FFFu + ((u >> 16u) & 1u)) >> 16u;
}
