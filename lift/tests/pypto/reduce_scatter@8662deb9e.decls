// Declarations of pypto's builtin reduce_scatter kernel before #2279 (8662deb9e). That kernel
// reduces the whole target, flat, in tiles of 256 elements (`numel`, the product of its
// shapes) on every rank: an allreduce of the [NR * SIZE] elements, which also leaves every
// rank's row reduced. Its tile loop crosses rows, which a region of a [rows][SIZE] window
// cannot, so it is declared as what it computes.
collective reduce_scatter: allreduce(sum, target)
param numel: int in 1..=2048;
signal signal_base[nranks];
window target: f32[numel] per call;
