// Declarations of pypto's builtin allreduce kernel as its callers use it (collc lift --decls).
collective allreduce: allreduce(sum, data)
param numel: int in 1..=2048;
param block_num: int in 1..=4;
param signal_stride: int in 1..=4;
signal signal_base[nranks][signal_stride];
window data: f32[numel] per call;
// The kernel loads whole 32-byte units (transfer_chunk); callers pass multiples of 8 floats.
require numel % 8 == 0;
