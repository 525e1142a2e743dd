// Launches of more than 65535 workgroups come as a 2-D grid (kernels/launch.h): the flat indices back.

fn flat_group(group: vec3<u32>, groups: vec3<u32>) -> u32 {
  return group.x + group.y * groups.x;
}

fn flat_thread(gid: vec3<u32>, groups: vec3<u32>, workgroup_size: u32) -> u32 {
  return gid.x + gid.y * groups.x * workgroup_size;
}
