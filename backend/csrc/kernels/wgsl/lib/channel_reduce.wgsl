// Per-channel reductions of an (outer, channels, inner) view, one workgroup per channel: batch
// normalisation's statistics and its backward sums. The host fills {{acc}} (f32 or f64) and
// {{workgroup_size}} (a power of two).

var<workgroup> channel_partial: array<{{acc}}, {{workgroup_size}}>;

// Memory index (from the operand's first element) of element j of channel c, j running over the
// channel's `outer * inner` elements: NCHW has inner = H * W, channels_last (NHWC) inner = 1.
fn channel_element(c: u32, j: u32, channels: u32, inner: u32) -> u32 {
  return (j / inner) * channels * inner + c * inner + j % inner;
}

// The sum of every lane's `value`, added in one fixed tree order (the same bits on every run and
// every adapter that rounds IEEE additions), handed to every lane. Call from uniform control flow.
fn workgroup_sum(lane: u32, value: {{acc}}) -> {{acc}} {
  channel_partial[lane] = value;
  workgroupBarrier();
  for (var stride = {{workgroup_size}}u / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      channel_partial[lane] = channel_partial[lane] + channel_partial[lane + stride];
    }
    workgroupBarrier();
  }
  let total = channel_partial[0];
  workgroupBarrier();
  return total;
}
