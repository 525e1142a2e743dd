// Softmax and log-softmax over the last dim of contiguous (rows, length) views, forward and backward,
// one entry point each: a workgroup per row folds the row (its max, the sum of exponentials, or a
// dot product with the gradient) with lib/workgroup_reduce.wgsl, then writes it. Computes in {{acc}}:
// float32 for every dtype but float64. A NaN in a row reaches every output of the row through the sum.
//! include lib/grid.wgsl
//! include lib/workgroup_reduce.wgsl
//! include lib/softmax_operands.wgsl

struct Params {
  rows: u32,
  length: u32,
  input_offset: u32, // forward: x; backward: the forward's output y
  out_offset: u32,
  grad_offset: u32,  // backward: dL/dy (the forward binds its input here, unread)
}

fn row_max(lane: u32, base: u32) -> {{acc}} {
  var largest = {{acc}}({{lowest}});
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    let v = x_at(base + i);
    largest = select(largest, v, v > largest);
  }
  return workgroup_max(lane, largest);
}

fn row_exp_sum(lane: u32, base: u32, largest: {{acc}}) -> {{acc}} {
  var sum = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    sum = sum + {{exp}}(x_at(base + i) - largest);
  }
  return workgroup_sum(lane, sum);
}

@compute @workgroup_size({{workgroup_size}})
fn softmax(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
           @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = p.input_offset + row * p.length;
  let out_base = p.out_offset + row * p.length;
  let largest = row_max(lane, base);
  let total = row_exp_sum(lane, base, largest);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    out[out_base + i] = {{exp}}(x_at(base + i) - largest) / total;
  }
}

@compute @workgroup_size({{workgroup_size}})
fn log_softmax(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
               @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = p.input_offset + row * p.length;
  let out_base = p.out_offset + row * p.length;
  let largest = row_max(lane, base);
  let log_total = {{log}}(row_exp_sum(lane, base, largest));
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    out[out_base + i] = x_at(base + i) - largest - log_total;
  }
}

// dx = y * (dy - sum(dy * y))
@compute @workgroup_size({{workgroup_size}})
fn softmax_backward(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                    @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = p.input_offset + row * p.length;
  let grad_base = p.grad_offset + row * p.length;
  let out_base = p.out_offset + row * p.length;
  var dot = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    dot = dot + g_at(grad_base + i) * x_at(base + i);
  }
  dot = workgroup_sum(lane, dot);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    out[out_base + i] = x_at(base + i) * (g_at(grad_base + i) - dot);
  }
}

// dx = dy - exp(y) * sum(dy)
@compute @workgroup_size({{workgroup_size}})
fn log_softmax_backward(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
                        @builtin(local_invocation_index) lane: u32) {
  let row = flat_group(group, groups);
  if (row >= p.rows) { return; }
  let base = p.input_offset + row * p.length;
  let grad_base = p.grad_offset + row * p.length;
  let out_base = p.out_offset + row * p.length;
  var total = {{acc}}(0);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    total = total + g_at(grad_base + i);
  }
  total = workgroup_sum(lane, total);
  for (var i = lane; i < p.length; i += {{workgroup_size}}u) {
    out[out_base + i] = g_at(grad_base + i) - {{exp}}(x_at(base + i)) * total;
  }
}
