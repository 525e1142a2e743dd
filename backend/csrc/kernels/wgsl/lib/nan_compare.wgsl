// NaN-aware comparisons in the accumulator type (the acc hole), with PyTorch's rule that NaN wins a max
// or min. WGSL lets implementations assume floats are never NaN (`x != x` may fold to false, and does
// on lavapipe), so the is_nan hole tests the bits of x (false for integer types).

fn is_nan(x: {{acc}}) -> bool {
  return {{is_nan}};
}

// b where it is larger than a, or NaN; otherwise a.
fn max_or_nan(a: {{acc}}, b: {{acc}}) -> {{acc}} {
  return select(a, b, b > a || is_nan(b));
}

// b where it is smaller than a, or NaN; otherwise a.
fn min_or_nan(a: {{acc}}, b: {{acc}}) -> {{acc}} {
  return select(a, b, b < a || is_nan(b));
}

// x beats a in an argmax: strictly larger, or NaN against a number (so the first NaN is kept).
fn beats_for_max(x: {{acc}}, a: {{acc}}) -> bool {
  return x > a || (is_nan(x) && !is_nan(a));
}

fn beats_for_min(x: {{acc}}, a: {{acc}}) -> bool {
  return x < a || (is_nan(x) && !is_nan(a));
}
