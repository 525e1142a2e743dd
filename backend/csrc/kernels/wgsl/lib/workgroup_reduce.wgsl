// Workgroup-wide folds of one {{acc}} per lane in one fixed tree order (the same bits on every run and
// on every adapter that rounds IEEE operations), handed to every lane. {{workgroup_size}} lanes, a
// power of two; call from uniform control flow.

var<workgroup> partial: array<{{acc}}, {{workgroup_size}}>;

fn workgroup_sum(lane: u32, value: {{acc}}) -> {{acc}} {
  partial[lane] = value;
  workgroupBarrier();
  for (var stride = {{workgroup_size}}u / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      partial[lane] = partial[lane] + partial[lane + stride];
    }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}

// The largest value. A NaN never wins a `>` comparison, so callers that must propagate NaN let it
// reach their result another way (softmax: through the sum of exponentials).
fn workgroup_max(lane: u32, value: {{acc}}) -> {{acc}} {
  partial[lane] = value;
  workgroupBarrier();
  for (var stride = {{workgroup_size}}u / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      let other = partial[lane + stride];
      partial[lane] = select(partial[lane], other, other > partial[lane]);
    }
    workgroupBarrier();
  }
  let largest = partial[0];
  workgroupBarrier();
  return largest;
}
