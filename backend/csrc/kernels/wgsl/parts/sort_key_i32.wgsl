// Order-preserving unsigned key of an int32 (and of the narrower ints and bool, computed as int32):
// the sign bit flipped.
fn sort_key(v: i32) -> u32 { return bitcast<u32>(v) ^ 0x80000000u; }
