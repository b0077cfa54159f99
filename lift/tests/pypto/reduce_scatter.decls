// Declarations of pypto's builtin reduce_scatter kernel as its callers use it (collc lift --decls).
collective reduce_scatter: reduce_scatter(sum, target, target)
param rows: int in 1..=16;
param row_elems: int in 1..=512;
signal signal_base[nranks];
window target: f32[rows][row_elems] per call;
