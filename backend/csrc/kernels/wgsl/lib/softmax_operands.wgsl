// The operands of softmax.wgsl and softmax_strided.wgsl (each declares its own Params): the output in
// {{acc}}, the input and gradient in their dtype, read as {{acc}}.

@group(0) @binding(0) var<storage, read_write> out: array<{{acc}}>;
@group(0) @binding(1) var<storage, read_write> input: {{array}};
@group(0) @binding(2) var<storage, read_write> grad: {{array}};
@group(0) @binding(3) var<uniform> p: Params;

{{math}}

fn x_at(i: u32) -> {{acc}} {
  return {{load_input}};
}

fn g_at(i: u32) -> {{acc}} {
  return {{load_grad}};
}
