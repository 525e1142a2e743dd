// Float tensors as lanes of u32 words: a float32 element per word, two float16 or bfloat16 elements
// (low half first). A thread owns whole words of every operand, so a packed word is read once, updated
// lane by lane in float32 and written once, and no two threads write one word.

const LANES: u32 = {{lanes}}u;

fn lane_value(word: u32, lane: u32) -> f32 {
  return {{decode}};
}

fn with_lane(word: u32, lane: u32, v: f32) -> u32 {
  return {{encode}};
}
