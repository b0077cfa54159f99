// Declarations of pypto's builtin allgather kernel as its callers use it (collc lift --decls).
collective allgather: allgather(input_local, target)
param row_numel: int in 1..=1024;
signal signal_base[nranks];
window input_local: f32[row_numel] per call;
window target: f32[nranks][row_numel] per call;
