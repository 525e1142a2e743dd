// What the 2-D pooling kernels share (max_pool2d's and the average pools', forward and backward): the
// uniform block (one layout, so one host-side fill serves them all; the average pools bind no indices)
// and the walk of a 4-D (n, c, y, x) grid. Spatial positions are i32 where a window may start in the
// padding; the host keeps every extent below 2^30, and nothing here divides a negative number (the
// first in-range tap is found with unsigned arithmetic).

struct Params {
  count: u32,      // threads: output elements (forward) or input elements (backward)
  channels: u32,
  in_h: u32,
  in_w: u32,
  out_h: u32,
  out_w: u32,
  kernel_h: u32,
  kernel_w: u32,
  stride_h: u32,
  stride_w: u32,
  pad_h: u32,
  pad_w: u32,
  dilation_h: u32,
  dilation_w: u32,
  image_offset: u32,  // first element of the input (forward) or grad_input (backward)
  pooled_offset: u32, // first element of the values (forward) or grad_output (backward)
  index_offset: u32,  // first u32 word of the int64 indices
  image: vec4<u32>,   // strides (n, c, h, w) of the input or grad_input, in elements
  pooled: vec4<u32>,  // of the values or grad_output, in elements
  index: vec4<u32>,   // of the indices, in u32 words
}

// Thread t's (n, c, y, x) in a grid of `h` x `w` positions per plane: x fastest, or, for tensors
// stored channels_last, c fastest, so that neighbouring threads touch neighbouring elements.
fn grid_position(t: u32, h: u32, w: u32) -> vec4<u32> {
  if (CHANNELS_FAST) {
    let c = t % p.channels;
    let rest = t / p.channels;
    return vec4<u32>(rest / (h * w), c, (rest / w) % h, rest % w);
  }
  let plane = t / (h * w);
  return vec4<u32>(plane / p.channels, plane % p.channels, (t / w) % h, t % w);
}

fn element_at(strides: vec4<u32>, at: vec4<u32>) -> u32 {
  return at.x * strides.x + at.y * strides.y + at.z * strides.z + at.w * strides.w;
}

// The first tap of a window starting at `start` (possibly negative) that lies at or after 0, stepping
// by `dilation`: the CPU's `while (start < 0) start += dilation`.
fn first_tap(start: i32, dilation: u32) -> i32 {
  if (start >= 0) { return start; }
  let steps = (u32(-start) + dilation - 1u) / dilation;
  return start + i32(steps * dilation);
}
