//! collc's code generators and the host (CPU-thread) runner.
//!
//! * [`cpp`]: the C++ generator — a target-neutral statement walker ([`cpp::walk`]) and the
//!   `pto::comm` dialect ([`cpp::pto`]) whose one source builds for Ascend and for CPU threads.
//! * [`mpi`]: the MPI-3 RMA backend — the same walker with the MPI dialect, `mpicxx` builds
//!   (cached by content hash), `mpirun` runs with a deadline and no orphans.
//! * [`ascend_check`]: the Ascend compile check without the CCE toolchain (`g++ -fsyntax-only`
//!   against declarations of the public pto-isa / simpler API, `backend/runtime/ascend_decls/`).
//! * [`pto_sim`]: the real pto-isa / simpler headers (`PTO_ISA_ROOT`, `SIMPLER_ROOT`) in
//!   pto-isa's CPU simulation (`-D__CPU_SIM`), the way pypto's a2a3sim builds kernels.
//! * [`trace`]: traced runs (`collc run --trace`) and their conformance to the IR.
//! * [`layout`]: the args-block ABI of generated kernels.
//! * [`library`]: verified protocols packaged as libraries host programs call (`--lib`).
//! * [`host`]: compile a generated kernel with the system C++ compiler (cached by content
//!   hash), run it on P rank threads for K calls, check the outputs ([`oracle`]).

pub mod ascend_check;
pub mod calls;
pub mod cpp;
pub mod host;
pub mod layout;
pub mod library;
pub mod mpi;
pub mod oracle;
pub mod pto_sim;
pub mod ranks;
pub mod testing;
pub mod trace;
