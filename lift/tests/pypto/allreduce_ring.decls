// Declarations of pypto's builtin allreduce_ring kernel as its callers use it (collc lift --decls).
collective allreduce_ring: allreduce(sum, data)
param numel: int in 1..=4096;
// pypto allocates one signal row per ring round plus the final barrier row.
let signal_rows = 2 * nranks - 1;
let signal_cols = nranks;
require numel % nranks == 0;
signal signal_base[signal_rows][signal_cols];
window data: f32[numel] per call;
