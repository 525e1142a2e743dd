// The uniform block of adaptive_max_pool2d's forward and backward kernels: one layout, so one host-side
// fill serves both.

struct Params {
  count: u32,        // threads: output elements (forward) or input elements (backward)
  src_offset: u32,   // first element read: the input (forward) or grad_output (backward), in its window
  out_offset: u32,   // first element written: the values (forward) or grad_input (backward)
  index_offset: u32, // first index (in u32 words) within its window
  in_h: u32,
  in_w: u32,
  out_h: u32,
  out_w: u32,
}
