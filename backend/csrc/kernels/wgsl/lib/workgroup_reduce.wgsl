// The one tree fold of the kernels: `size` lanes (a power of two) from lane `base` of the workgroup
// fold one {{acc}} each through workgroup memory, in a fixed order: the same bits on every run, and on
// every adapter that rounds IEEE operations, whatever its subgroup size. Each lane gets the result.
// Every lane of the workgroup calls, from uniform control flow, with the same `size`.

var<workgroup> partial: array<{{acc}}, {{workgroup_size}}>;

fn fold_sum(base: u32, size: u32, lane: u32, value: {{acc}}) -> {{acc}} {
  partial[base + lane] = value;
  workgroupBarrier();
  for (var stride = size / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      partial[base + lane] = partial[base + lane] + partial[base + lane + stride];
    }
    workgroupBarrier();
  }
  let total = partial[base];
  workgroupBarrier();
  return total;
}

// The largest value. A NaN never wins a `>` comparison, so callers that must propagate NaN let it
// reach their result another way (softmax: through the sum of exponentials).
fn fold_max(base: u32, size: u32, lane: u32, value: {{acc}}) -> {{acc}} {
  partial[base + lane] = value;
  workgroupBarrier();
  for (var stride = size / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      let other = partial[base + lane + stride];
      partial[base + lane] = select(partial[base + lane], other, other > partial[base + lane]);
    }
    workgroupBarrier();
  }
  let largest = partial[base];
  workgroupBarrier();
  return largest;
}

fn workgroup_sum(lane: u32, value: {{acc}}) -> {{acc}} { return fold_sum(0u, {{workgroup_size}}u, lane, value); }
fn workgroup_max(lane: u32, value: {{acc}}) -> {{acc}} { return fold_max(0u, {{workgroup_size}}u, lane, value); }
