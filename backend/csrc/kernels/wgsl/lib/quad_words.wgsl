// Four consecutive elements as the words that hold them: one vec4<u32> of a 4-byte dtype, one
// vec2<u32> of a 2-byte one, one u32 of a 1-byte one; spread into (or packed from) four u32 words so
// that one lane-extracting load serves every size.

fn quad_words_4(v: vec4<u32>) -> array<u32, 4> {
  return array<u32, 4>(v.x, v.y, v.z, v.w);
}

fn quad_words_2(v: vec2<u32>) -> array<u32, 4> {
  return array<u32, 4>(v.x, v.y, 0u, 0u);
}

fn quad_words_1(v: u32) -> array<u32, 4> {
  return array<u32, 4>(v, 0u, 0u, 0u);
}

// r0..r3: the stored forms of four elements, each in the low bits of its u32.
fn pack_quad_4(r0: u32, r1: u32, r2: u32, r3: u32) -> vec4<u32> {
  return vec4<u32>(r0, r1, r2, r3);
}

fn pack_quad_2(r0: u32, r1: u32, r2: u32, r3: u32) -> vec2<u32> {
  return vec2<u32>(r0 | (r1 << 16u), r2 | (r3 << 16u));
}

fn pack_quad_1(r0: u32, r1: u32, r2: u32, r3: u32) -> u32 {
  return r0 | (r1 << 8u) | (r2 << 16u) | (r3 << 24u);
}
