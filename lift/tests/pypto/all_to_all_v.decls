// Declarations of pypto's builtin all_to_all_v kernel as its callers use it (collc lift --decls).
collective all_to_all_v: all_to_all_v(input_local, target, send_counts_base, recv_counts_base, row_numel)
param max_recv: int in 1..=4;
param row_numel: int in 1..=256;
signal signal_base[nranks];
signal recv_counts_base[nranks] as value per call;
array send_counts_base: int[nranks] in 0..=16;
window input_local: f32[nranks][max_recv * row_numel] per call;
window target: f32[nranks][max_recv * row_numel] per call;
