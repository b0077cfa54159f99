// Declarations of pypto's builtin broadcast kernel as its callers use it (collc lift --decls).
collective broadcast: broadcast(kRoot, target)
// {{root_cpp}} is rendered per root: every root is checked.
param kRoot: rank;
param numel: int in 1..=2048;
signal signal_base[nranks];
window target: f32[numel] per call;
