// One element per thread, into a destination of 4- or 8-byte elements: element(e) is the stored form
// of element e, dst_index(e) where it goes.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, WORKGROUP_SIZE);
  if (t >= p.numel) { return; }
  dst[dst_index(t)] = element(t);
}
