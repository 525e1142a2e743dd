// reduce.wgsl's workgroup fold for adapters with subgroup operations, appended to reduce.wgsl's text
// (it uses that file's Params, bindings and helpers): one subgroup operation per subgroup, then lane 0
// folds the few subgroup results in order. Only for 32-bit accumulators (f32 or i32: the subgroup
// builtins take no 64-bit types here) and the ops that fold with combine(). No
// `enable subgroups;`: this naga rejects the directive and takes the builtins when the device was
// created with the subgroup feature.

// subgroupMax/Min leave NaN to the implementation; PyTorch's max/min propagate it (the nan hole).
fn subgroup_max_or_nan(v: {{acc}}) -> {{acc}} {
  return select(subgroupMax(v), {{nan}}, subgroupAny(is_nan(v)));
}

fn subgroup_min_or_nan(v: {{acc}}) -> {{acc}} {
  return select(subgroupMin(v), {{nan}}, subgroupAny(is_nan(v)));
}

@compute @workgroup_size({{workgroup_size}})
fn reduce_workgroup_subgroups(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                              @builtin(local_invocation_index) lane: u32,
                              @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_id) sg_id: u32,
                              @builtin(num_subgroups) sg_count: u32) {
  let o = p.first + flat_group(group, groups);
  if (o >= p.end) { return; }
  let folded = {{subgroup_fold}}(lane_fold(o, lane));
  if (sg_lane == 0u) { partial[sg_id] = folded; }
  workgroupBarrier();
  if (lane == 0u) {
    var total = partial[0];
    for (var i = 1u; i < sg_count; i++) { total = combine(total, partial[i]); }
    out[result_index(o)] = finish(total);
  }
}
