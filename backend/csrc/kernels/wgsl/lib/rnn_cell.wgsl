// What the fused LSTM and GRU cell kernels share: one thread per (batch row b, hidden unit j) of a
// cell whose gates are laid out [b][gate * hidden + j] (contiguous, as aten's cells hand them over),
// the uniform block, and where each storage binding's tensor starts. Every value is computed in `real`
// (float32, or float64 for a float64 cell) from loads in the tensors' own dtype; the helpers
// (sigmoid_, tanh_) are the elementwise ops' own, so a fused cell computes what the ops did.

struct Params {
  count: u32,  // batch * hidden: threads
  hidden: u32,
  unused0: u32,
  unused1: u32,
  offsets: array<vec4<u32>, 2>, // first element of the tensor at storage binding k: offsets[k / 4][k % 4]
}

alias real = {{real}};

fn offset_of(binding: u32) -> u32 {
  return p.offsets[binding >> 2u][binding & 3u];
}

// Element (b, gate * hidden + j) of a [batch, gates * hidden] tensor, relative to its start.
fn gate_at(b: u32, gates: u32, gate: u32, j: u32) -> u32 {
  return b * gates * p.hidden + gate * p.hidden + j;
}
