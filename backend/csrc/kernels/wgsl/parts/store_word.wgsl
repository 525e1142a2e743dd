// One whole u32 word per thread, into a dense destination of packed 1- or 2-byte elements: words
// p.first_word .. p.first_word + p.words - 1 hold elements p.out_offset .. p.out_offset + p.numel - 1.
// Only the first and last words can hold bytes outside the tensor; those keep their old contents.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let t = flat_thread(gid, groups, WORKGROUP_SIZE);
  if (t >= p.words) { return; }
  let lanes = 1u << LANES_LOG2;
  let bits = 32u >> LANES_LOG2;
  let w = p.first_word + t;
  var word = 0u;
  if (t == 0u || t + 1u == p.words) { word = dst[w]; }
  for (var j = 0u; j < lanes; j++) {
    let e = w * lanes + j;
    if (e >= p.out_offset && e - p.out_offset < p.numel) {
      word = insertBits(word, element(e - p.out_offset), j * bits, bits);
    }
  }
  dst[w] = word;
}
