// Declarations of pypto's builtin barrier kernel as its callers use it (collc lift --decls).
collective barrier: barrier()
signal signal_base[nranks];
