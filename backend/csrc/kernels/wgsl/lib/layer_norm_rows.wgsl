// Shared by layer_norm.wgsl and layer_norm_backward.wgsl: the input row's values in float32.

fn x_at(i: u32) -> f32 {
  return {{load_x}};
}
