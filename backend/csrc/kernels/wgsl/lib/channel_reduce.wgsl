// Per-channel reductions of an (outer, channels, inner) view, one workgroup per channel: batch
// normalisation's statistics and its backward sums, folded by lib/workgroup_reduce.wgsl's
// workgroup_sum. The host fills {{acc}} (f32 or f64) and {{workgroup_size}} (a power of two).
//! include lib/workgroup_reduce.wgsl

// Memory index (from the operand's first element) of element j of channel c, j running over the
// channel's `outer * inner` elements: NCHW has inner = H * W, channels_last (NHWC) inner = 1.
fn channel_element(c: u32, j: u32, channels: u32, inner: u32) -> u32 {
  return (j / inner) * channels * inner + c * inner + j % inner;
}
