// A pool of the elementwise helper library: each item (a run of lines between blank lines) is one
// helper, named by its first `fn`; its leading comment lines are for the reader and are not emitted.
// `T` is the computation type and `BITS` its width; kernels/elementwise_math.cpp takes only the
// helpers an expression reaches. Embedded by backend/codegen/gen_wgsl_math.py.
//
// The bit tests for integer computation types: no NaN, no infinity.

fn isnan_(x: T) -> bool { return false; }

fn isinf_(x: T) -> bool { return false; }

fn signbit_(x: T) -> bool { return x < T(0); }
