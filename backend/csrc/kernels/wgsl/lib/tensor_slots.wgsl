// Multi-tensor launches (kernels/tensor_slots.h): each tensor of a launch is a slot with bindings of its
// own, since every dml storage is a buffer of its own. WGSL cannot index bindings, so the C++ side
// declares slot s's operand NAME as `slot<s>_NAME` and gives each operand load_NAME(slot, i) and
// store_NAME(slot, i, v), which switch on the slot. A slot's words start on a workgroup boundary, so a
// workgroup serves one slot and the switch is uniform. The family's Params has `slots` (tensors in the
// launch) and `slot: array<vec4<u32>, 32>` whose x is each slot's first workgroup and y its elements.

// The slot whose workgroups include `group`: the last with p.slot[s].x <= group (slot 0 starts at 0).
fn slot_of(group: u32) -> u32 {
  var low = 0u;
  var high = p.slots;
  loop {
    if (high - low <= 1u) { break; }
    let middle = (low + high) >> 1u;
    if (p.slot[middle].x <= group) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

// The thread's first word within its slot's tensor, a workgroup spanning `span` words (past the
// tensor's end for the grid's spare workgroups).
fn slot_word(group: u32, local: u32, slot: u32, span: u32) -> u32 {
  return (group - p.slot[slot].x) * span + local;
}
