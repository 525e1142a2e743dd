// One element per thread, into a strided destination of packed 1- or 2-byte elements (dst is
// array<atomic<u32>>): neighbouring elements share words with other threads, and with memory outside
// the tensor, so only this element's lane is replaced, atomically.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, WORKGROUP_SIZE);
  if (t >= p.numel) { return; }
  let bits = 32u >> LANES_LOG2;
  let mask = (1u << bits) - 1u;
  let d = dst_index(t);
  let w = d >> LANES_LOG2;
  let s = (d & ((1u << LANES_LOG2) - 1u)) * bits;
  let v = element(t);
  atomicAnd(&dst[w], ~(mask << s));
  atomicOr(&dst[w], (v & mask) << s);
}
