//! The launcher's C ABI (`collc/host_launch.hpp`, ABI version 4) mirrored in Rust, and the
//! in-process execution of a [`Job`] through `dlopen` (libloading).
//!
//! Loaded libraries stay loaded for the life of the process (a library that started threads
//! with thread-local state is not safe to `dlclose`), one handle per path.

use super::job::{ExecError, Job, Outcome};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};

/// `COLLC_ABI_VERSION`.
pub const ABI_VERSION: u32 = 4;
/// `COLLC_MAX_RANKS` of `host_launch.hpp` (the report's per-rank array).
const MAX_RANKS: usize = crate::ranks::HOST_MAX_RANKS as usize;
const MESSAGE_BYTES: usize = 8192;

/// `CollcBufferDesc`.
#[repr(C)]
pub struct BufferDesc {
    /// Name (NUL-terminated) or null.
    pub name: *const c_char,
    /// Bytes.
    pub bytes: u64,
    /// Kind.
    pub kind: u32,
    /// `CollcBufferLifetime`: 0 reused, 1 per call.
    pub lifetime: u32,
}

type Hook = unsafe extern "C" fn(*mut c_void, i32, i32, *mut u8, *const *mut u8);
type FinishHook = unsafe extern "C" fn(*mut c_void, i32, *mut u8, *const *mut u8);
type BlockHook = unsafe extern "C" fn(*mut c_void, i32, i32, i32);

/// `CollcRunConfig`.
#[repr(C)]
pub struct RunConfig {
    /// ABI version.
    pub abi_version: u32,
    /// P.
    pub nranks: i32,
    /// C.
    pub nblocks: i32,
    /// K.
    pub ncalls: i32,
    /// Buffers.
    pub buffers: *const BufferDesc,
    /// B.
    pub nbuffers: i32,
    /// S.
    pub nscalars: i32,
    /// Scalars.
    pub scalars: *const i64,
    /// Flags.
    pub flags: u32,
    /// TWAIT deadline.
    pub twait_timeout_ms: u32,
    /// Kernel (null: the library's).
    pub kernel: *const c_void,
    /// Hook argument.
    pub user: *mut c_void,
    /// Prepare hook.
    pub prepare: Option<Hook>,
    /// Collect hook.
    pub collect: Option<Hook>,
    /// Finish hook.
    pub finish: Option<FinishHook>,
    /// Chaos seed.
    pub chaos_seed: u64,
    /// Longest chaos sleep.
    pub chaos_max_us: u32,
    /// 0.
    pub reserved: u32,
    /// Block entry hook (right before the block's kernel call).
    pub enter: Option<BlockHook>,
    /// Block exit hook (right after it).
    pub leave: Option<BlockHook>,
}

/// `CollcRunReport`.
#[repr(C)]
pub struct RunReport {
    /// Status.
    pub status: i32,
    /// Calls per rank.
    pub calls_completed: [i32; MAX_RANKS],
    /// Failing wait: rank.
    pub fail_rank: i32,
    /// Block.
    pub fail_block: i32,
    /// Call.
    pub fail_call: i32,
    /// Window rank.
    pub fail_window_rank: i32,
    /// Cell offset.
    pub fail_cell_offset: u64,
    /// Buffer.
    pub fail_buffer: i32,
    /// Comparison.
    pub fail_cmp: i32,
    /// Cell index.
    pub fail_cell_index: i64,
    /// Expected.
    pub fail_expected: i32,
    /// Observed.
    pub fail_observed: i32,
    /// Residue count.
    pub nonzero_cells: u64,
    /// First residue: rank.
    pub first_nonzero_rank: i32,
    /// Buffer.
    pub first_nonzero_buffer: i32,
    /// Index.
    pub first_nonzero_index: i64,
    /// Value.
    pub first_nonzero_value: i32,
    /// 0.
    pub reserved: i32,
    /// Wall time, ns.
    pub elapsed_ns: f64,
    /// Message.
    pub message: [c_char; MESSAGE_BYTES],
}

type RunFn = unsafe extern "C" fn(*const RunConfig, *mut RunReport) -> i32;

/// A loaded kernel library.
pub struct Loaded {
    run: RunFn,
}

fn libraries() -> &'static Mutex<HashMap<PathBuf, &'static libloading::Library>> {
    static L: OnceLock<Mutex<HashMap<PathBuf, &'static libloading::Library>>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Loads (once per path) a kernel library and resolves `collc_host_run`.
pub fn load(lib: &Path) -> Result<Loaded, ExecError> {
    let mut map = libraries().lock().unwrap_or_else(|e| e.into_inner());
    let handle: &'static libloading::Library = match map.get(lib) {
        Some(h) => h,
        None => {
            // SAFETY: the library is a collc kernel library built by this crate; loading it
            // runs no initialisers beyond the C++ runtime's.
            let l = unsafe { libloading::Library::new(lib) }
                .map_err(|e| ExecError::Load(format!("{}: {e}", lib.display())))?;
            let l: &'static libloading::Library = Box::leak(Box::new(l));
            map.insert(lib.to_path_buf(), l);
            l
        }
    };
    // SAFETY: `collc_host_run` has exactly this signature (host_launch.hpp).
    let run: RunFn = unsafe {
        *handle
            .get::<RunFn>(b"collc_host_run\0")
            .map_err(|e| ExecError::Load(format!("{}: no collc_host_run: {e}", lib.display())))?
    };
    Ok(Loaded { run })
}

type TraceFn = unsafe extern "C" fn(*const c_char, u64);

/// Sets (or with `None` clears) the library's trace file (`collc_host_trace`).
fn set_trace(lib: &Path, path: Option<&CString>, capacity: u64) -> Result<(), ExecError> {
    let map = libraries().lock().unwrap_or_else(|e| e.into_inner());
    let handle = map
        .get(lib)
        .ok_or_else(|| ExecError::Load(format!("{}: not loaded", lib.display())))?;
    // SAFETY: `collc_host_trace` has exactly this signature (host_launch.hpp).
    let f: TraceFn = unsafe {
        *handle
            .get::<TraceFn>(b"collc_host_trace\0")
            .map_err(|e| ExecError::Load(format!("{}: no collc_host_trace: {e}", lib.display())))?
    };
    // SAFETY: the path is NUL-terminated and outlives the call (the library copies it).
    unsafe { f(path.map_or(std::ptr::null(), |p| p.as_ptr()), capacity) };
    Ok(())
}

struct HookState<'a> {
    job: &'a Job,
    staged: Vec<usize>,
    collected: Vec<usize>,
    outputs: Vec<Mutex<Option<Vec<u8>>>>,
    /// Per (rank, block, call): the block's entry stamp ([`stamp_slot`]).
    stamps: Vec<AtomicI64>,
    barrier_errors: AtomicI64,
}

unsafe extern "C" fn prepare(
    user: *mut c_void,
    rank: i32,
    call: i32,
    _w: *mut u8,
    buffers: *const *mut u8,
) {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `user` is the HookState passed in the config; it outlives the run.
        let st = unsafe { &*(user as *const HookState) };
        let slot = call as usize * st.job.nranks as usize + rank as usize;
        let img = &st.job.inputs[slot];
        let mut off = 0;
        for &b in &st.staged {
            let n = st.job.buffers[b].bytes as usize;
            if st.job.stages(rank as usize, b) {
                // SAFETY: buffers[b] points at `bytes` bytes of this rank's window; only this
                // rank's thread touches it here.
                unsafe {
                    let dst = *buffers.add(b);
                    std::ptr::copy_nonoverlapping(img[off..off + n].as_ptr(), dst, n);
                }
            }
            off += n;
        }
    });
    if r.is_err() {
        std::process::abort();
    }
}

unsafe extern "C" fn collect(
    user: *mut c_void,
    rank: i32,
    call: i32,
    _w: *mut u8,
    buffers: *const *mut u8,
) {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: as in `prepare`.
        let st = unsafe { &*(user as *const HookState) };
        let slot = call as usize * st.job.nranks as usize + rank as usize;
        if !st.collected.is_empty() {
            let mut img = Vec::new();
            for &b in &st.collected {
                let n = st.job.buffers[b].bytes as usize;
                // SAFETY: as in `prepare`.
                unsafe {
                    let src = *buffers.add(b);
                    img.extend_from_slice(std::slice::from_raw_parts(src, n));
                }
            }
            *st.outputs[slot].lock().unwrap_or_else(|e| e.into_inner()) = Some(img);
        } else {
            *st.outputs[slot].lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
        }
    });
    if r.is_err() {
        std::process::abort();
    }
}

/// The stamp slot of (rank, block, call); its stamp is the slot + 1.
fn stamp_slot(job: &Job, r: i32, b: i32, k: i32) -> usize {
    (r as usize * job.nblocks as usize + b as usize) * job.ncalls as usize + k as usize
}

unsafe extern "C" fn enter(user: *mut c_void, rank: i32, block: i32, call: i32) {
    // SAFETY: as in `prepare`.
    let st = unsafe { &*(user as *const HookState) };
    let s = stamp_slot(st.job, rank, block, call);
    st.stamps[s].store(s as i64 + 1, Ordering::Relaxed);
}

/// The barrier rule at a block's exit: the entry stamp of this call of every block it waits
/// for (`Job::per_lane`: its own index; else every block) on every other rank is visible.
unsafe extern "C" fn leave(user: *mut c_void, rank: i32, block: i32, call: i32) {
    // SAFETY: as in `prepare`.
    let st = unsafe { &*(user as *const HookState) };
    let lanes = if st.job.per_lane {
        block..block + 1
    } else {
        0..st.job.nblocks
    };
    for q in (0..st.job.nranks).filter(|q| *q != rank) {
        for b in lanes.clone() {
            let s = stamp_slot(st.job, q, b, call);
            if st.stamps[s].load(Ordering::Relaxed) != s as i64 + 1 {
                st.barrier_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl<'a> HookState<'a> {
    /// The hooks' state for `job`, with `slots` (call, rank) slots.
    fn new(job: &'a Job, slots: usize) -> Self {
        HookState {
            job,
            staged: (0..job.buffers.len())
                .filter(|&b| job.buffers[b].stage)
                .collect(),
            collected: (0..job.buffers.len())
                .filter(|&b| job.buffers[b].collect)
                .collect(),
            outputs: (0..slots).map(|_| Mutex::new(None)).collect(),
            stamps: (0..slots * job.nblocks.max(0) as usize)
                .map(|_| AtomicI64::new(0))
                .collect(),
            barrier_errors: AtomicI64::new(0),
        }
    }
}

/// Runs a job in this process.
pub fn run(lib: &Path, job: &Job) -> Result<Outcome, ExecError> {
    let loaded = load(lib)?;
    let names: Vec<CString> = job
        .buffers
        .iter()
        .map(|b| CString::new(b.name.replace('\0', "?")).unwrap_or_default())
        .collect();
    let descs: Vec<BufferDesc> = job
        .buffers
        .iter()
        .zip(&names)
        .map(|(b, n)| BufferDesc {
            name: n.as_ptr(),
            bytes: b.bytes,
            kind: b.kind,
            lifetime: u32::from(b.per_call),
        })
        .collect();
    let slots = job.ncalls.max(0) as usize * job.nranks.max(0) as usize;
    let st = HookState::new(job, slots);
    if job.inputs.len() != slots {
        return Err(ExecError::Load(format!(
            "job has {} input images for {slots} (call, rank) slots",
            job.inputs.len()
        )));
    }
    let cfg = RunConfig {
        abi_version: ABI_VERSION,
        nranks: job.nranks,
        nblocks: job.nblocks,
        ncalls: job.ncalls,
        buffers: descs.as_ptr(),
        nbuffers: descs.len() as i32,
        nscalars: job.scalars.len() as i32,
        scalars: job.scalars.as_ptr(),
        flags: job.flags | super::job::FLAG_QUIET,
        twait_timeout_ms: job.twait_timeout_ms,
        kernel: std::ptr::null(),
        user: &st as *const HookState as *mut c_void,
        prepare: Some(prepare),
        collect: Some(collect),
        finish: None,
        chaos_seed: job.chaos_seed,
        chaos_max_us: job.chaos_max_us,
        reserved: 0,
        enter: job.barrier_check.then_some(enter as BlockHook),
        leave: job.barrier_check.then_some(leave as BlockHook),
    };
    // A traced run names its file through the library's `collc_host_trace` (one traced
    // in-process run at a time: the setting is the library's).
    static TRACED: Mutex<()> = Mutex::new(());
    let _traced = job
        .trace_file
        .as_ref()
        .map(|t| -> Result<_, ExecError> {
            let guard = TRACED.lock().unwrap_or_else(|e| e.into_inner());
            let path = CString::new(t.to_string_lossy().into_owned())
                .map_err(|e| ExecError::Load(format!("trace file name: {e}")))?;
            set_trace(lib, Some(&path), job.trace_capacity)?;
            Ok(guard)
        })
        .transpose()?;
    // SAFETY: RunReport is plain data; all-zero is a valid value.
    let mut report: Box<RunReport> = unsafe { Box::new(std::mem::zeroed()) };
    // SAFETY: cfg and everything it points to (descs, names, scalars, st) outlive the call;
    // the launcher joins every thread before returning.
    let status = unsafe { (loaded.run)(&cfg, report.as_mut()) };
    if job.trace_file.is_some() {
        set_trace(lib, None, 0)?;
    }
    let msg_bytes: Vec<u8> = report
        .message
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let outputs = st
        .outputs
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    Ok(Outcome {
        status,
        calls_completed: report.calls_completed[..job.nranks.clamp(0, MAX_RANKS as i32) as usize]
            .to_vec(),
        nonzero_cells: report.nonzero_cells,
        elapsed_ns: report.elapsed_ns,
        barrier_errors: st.barrier_errors.load(Ordering::Relaxed),
        message: String::from_utf8_lossy(&msg_bytes).into_owned(),
        outputs,
    })
}
