// Shared by layer_norm.wgsl and layer_norm_backward.wgsl: the input row's values in {{acc}}.

fn x_at(i: u32) -> {{acc}} {
  return {{load_x}};
}
