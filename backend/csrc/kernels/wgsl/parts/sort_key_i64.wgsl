// Order-preserving unsigned key of an int64: the sign bit flipped.
fn sort_key(v: i64) -> u64 { return bitcast<u64>(v) ^ 0x8000000000000000lu; }
