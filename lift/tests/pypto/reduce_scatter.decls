// Declarations of pypto's builtin reduce_scatter kernel as its callers use it (collc lift --decls).
// pld.tensor.reduce_scatter reduces in place: its target is [NR, SIZE], one row per rank
// (python/pypto/language/distributed/op/tensor_ops.py), so the kernel's `rows` is the rank count.
collective reduce_scatter: reduce_scatter(sum, target)
let rows = nranks;
param row_elems: int in 1..=512;
signal signal_base[nranks];
window target: f32[rows][row_elems] per call;
