// Folds over a team of {{team}} lanes, {{rows_per_group}} teams per workgroup (a row each), through
// workgroup memory in one fixed tree order: the bits of a result never depend on the adapter's
// subgroup size. Every lane of the workgroup calls, from uniform control flow (a lane whose row is past
// the end takes part with a neutral value).

var<workgroup> team_partial: array<{{acc}}, {{workgroup_size}}>;

fn team_sum(team: u32, lane: u32, value: {{acc}}) -> {{acc}} {
  let base = team * {{team}}u;
  team_partial[base + lane] = value;
  workgroupBarrier();
  for (var stride = {{team}}u / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      team_partial[base + lane] = team_partial[base + lane] + team_partial[base + lane + stride];
    }
    workgroupBarrier();
  }
  let total = team_partial[base];
  workgroupBarrier();
  return total;
}

// The largest value; a NaN never wins a `>`, so callers let NaN reach their result through a sum.
fn team_max(team: u32, lane: u32, value: {{acc}}) -> {{acc}} {
  let base = team * {{team}}u;
  team_partial[base + lane] = value;
  workgroupBarrier();
  for (var stride = {{team}}u / 2u; stride > 0u; stride = stride >> 1u) {
    if (lane < stride) {
      let other = team_partial[base + lane + stride];
      team_partial[base + lane] = select(team_partial[base + lane], other, other > team_partial[base + lane]);
    }
    workgroupBarrier();
  }
  let largest = team_partial[base];
  workgroupBarrier();
  return largest;
}
