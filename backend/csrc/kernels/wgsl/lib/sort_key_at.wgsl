// The key of a row sort's element (sort.wgsl, sort_runs.wgsl): the order-preserving key
// (parts/sort_key_*.wgsl) of the loaded value, inverted for a descending sort so that both sort
// ascending. Reads the family's `src` and `p.descending`.
{{key_function}}

fn key_at(i: u32) -> {{key}} {
  let v = {{load}};
  let k = {{key_of_v}};
  if (p.descending != 0u) { return ~k; }
  return k;
}
