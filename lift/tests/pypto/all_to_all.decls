// Declarations of pypto's builtin all_to_all kernel as its callers use it (collc lift --decls).
collective all_to_all: all_to_all(input_local, target)
param row_numel: int in 1..=512;
signal signal_base[nranks];
window input_local: f32[nranks][row_numel] per call;
window target: f32[nranks][row_numel] per call;
