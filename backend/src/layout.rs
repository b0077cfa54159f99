//! The args-block ABI of a generated kernel (collc host ABI v2, see
//! `backend/runtime/collc/host_launch.hpp`), derived from a protocol.
//!
//! * buffers: every `signal` and `window` in declaration order, then every host `array`
//!   in declaration order (an extension of the runtime's convention: arrays are per-rank
//!   read-only inputs the host stages like window inputs, as int64 elements);
//! * scalars: the world size `P`, then every `param` in declaration order;
//! * then the `CommContext*`.
//!
//! Credit signals are `SIGNAL` buffers (checked for residue after a run); value signals
//! (`as value`, written with `Set`, never reset) are `DATA` buffers of int32 cells.
//!
//! # Lifetimes: how a per-call buffer is passed
//!
//! A `per call` window or value signal (LANGUAGE.md §5.8.1) is one args slot like any other
//! buffer: the generated kernel takes **the call's buffer** and never knows about other calls.
//! The launcher owns the lifetime: it allocates one instance per call in every rank's
//! symmetric window (`COLLC_LIFETIME_PER_CALL`, K instances at a 64-byte aligned stride,
//! zeroed before the first call and never used by another call) and writes call k's instance
//! into the args block of call k; the prepare/collect hooks of call k see the same instance.
//! Because every rank's window has the same layout, a remote access of call k on a rank lands
//! in the peer's call-k instance. A `reused` buffer (the default) has one instance that every
//! call's args point at. [`AbiBuffer::per_call`] says which; [`window_layout`] mirrors the
//! launcher's layout.

use collc_spec::eval::{eval, Bindings, EvalError};
use collc_spec::ir::{ArrayId, Decl, ElemType, Protocol, SignalId, SignalKind, VarId, WindowId};

/// What a buffer of the args block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferSource {
    /// A signal array (int32 cells).
    Signal(SignalId),
    /// A window (elements of its declared type).
    Window(WindowId),
    /// A host array (int64 elements).
    Array(ArrayId),
}

/// Element type of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// int32 signal cells.
    I32,
    /// f32 window data.
    F32,
    /// f64 window data.
    F64,
    /// int64 host-array values (or i64 window data).
    I64,
}

impl From<ElemType> for Elem {
    fn from(t: ElemType) -> Elem {
        match t {
            ElemType::F32 => Elem::F32,
            ElemType::F64 => Elem::F64,
            ElemType::I32 => Elem::I32,
            ElemType::I64 => Elem::I64,
        }
    }
}

impl Elem {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            Elem::I32 | Elem::F32 => 4,
            Elem::I64 | Elem::F64 => 8,
        }
    }
    /// The C++ element type.
    pub fn cpp(self) -> &'static str {
        match self {
            Elem::I32 => "int32_t",
            Elem::F32 => "float",
            Elem::F64 => "double",
            Elem::I64 => "int64_t",
        }
    }
}

/// One buffer of the args block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiBuffer {
    /// The spec's name (also the name in timeout and residue reports).
    pub name: String,
    /// Where it comes from.
    pub source: BufferSource,
    /// Element type.
    pub elem: Elem,
    /// True for credit signals (residue-checked after a run).
    pub is_credit_signal: bool,
    /// A fresh instance per call (`per call` window or value signal); false: one instance
    /// reused by every call. Host arrays are staged every call and need no instances.
    pub per_call: bool,
}

/// The parameter-independent ABI of a protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abi {
    /// Buffers, in args order.
    pub buffers: Vec<AbiBuffer>,
    /// Scalars, in args order (world size first).
    pub scalars: Vec<VarId>,
}

impl Abi {
    /// The ABI of a protocol.
    pub fn of(p: &Protocol) -> Abi {
        let mut buffers = Vec::new();
        for d in &p.decls {
            match *d {
                Decl::Signal(s) => {
                    let sig = &p.signals[s];
                    buffers.push(AbiBuffer {
                        name: sig.name.clone(),
                        source: BufferSource::Signal(s),
                        elem: Elem::I32,
                        // A monotonic signal keeps its count across calls: not checked for zero.
                        is_credit_signal: sig.kind == SignalKind::Credit && !sig.monotonic,
                        per_call: p.signal_per_call(s),
                    });
                }
                Decl::Window(w) => buffers.push(AbiBuffer {
                    name: p.windows[w].name.clone(),
                    source: BufferSource::Window(w),
                    elem: p.windows[w].elem.into(),
                    is_credit_signal: false,
                    per_call: p.window_per_call(w),
                }),
                _ => {}
            }
        }
        for d in &p.decls {
            if let Decl::Array(a) = *d {
                buffers.push(AbiBuffer {
                    name: p.arrays[a].name.clone(),
                    source: BufferSource::Array(a),
                    elem: Elem::I64,
                    is_credit_signal: false,
                    per_call: false,
                });
            }
        }
        Abi {
            buffers,
            scalars: p.inputs(),
        }
    }

    /// Index of the args slot holding the `CommContext*`.
    pub fn ctx_slot(&self) -> usize {
        self.buffers.len() + self.scalars.len()
    }

    /// The args index of a buffer.
    pub fn buffer_slot(&self, src: BufferSource) -> Option<usize> {
        self.buffers.iter().position(|b| b.source == src)
    }

    /// Element counts of every buffer under concrete parameters.
    pub fn element_counts(&self, p: &Protocol, b: &Bindings) -> Result<Vec<u64>, EvalError> {
        self.buffers
            .iter()
            .map(|buf| {
                let dims = match buf.source {
                    BufferSource::Signal(s) => &p.signals[s].dims,
                    BufferSource::Window(w) => &p.windows[w].dims,
                    BufferSource::Array(a) => &p.arrays[a].dims,
                };
                let mut n: u64 = 1;
                for d in dims {
                    let v = eval(p, d, &b.env)?;
                    let v = u64::try_from(v.max(0)).map_err(|_| EvalError::Overflow)?;
                    n = n.checked_mul(v).ok_or(EvalError::Overflow)?;
                }
                Ok(n)
            })
            .collect()
    }

    /// Scalar values under concrete parameters.
    pub fn scalar_values(&self, b: &Bindings) -> Vec<i64> {
        self.scalars
            .iter()
            .map(|v| b.env.get(*v).unwrap_or(0))
            .collect()
    }
}

/// Window layout of the launcher for `calls` calls: the 64-byte aligned offset of every
/// buffer (`(bytes, per_call)`; instance 0 of a per-call buffer, whose instance k is at
/// `offset + k * bytes.div_ceil(64) * 64`) and the window size (mirrors
/// `collc_host_window_layout`).
pub fn window_layout(buffers: &[(u64, bool)], calls: u64) -> (Vec<u64>, u64) {
    let mut offsets = Vec::with_capacity(buffers.len());
    let mut end = 0u64;
    for &(b, per_call) in buffers {
        let off = end.div_ceil(64) * 64;
        offsets.push(off);
        let copies = if per_call { calls.max(1) } else { 1 };
        end = off + b.div_ceil(64) * 64 * (copies - 1) + b;
    }
    (offsets, end.div_ceil(64) * 64 + 64)
}

#[cfg(test)]
mod tests {
    use super::window_layout;

    #[test]
    fn per_call_buffers_hold_one_instance_per_call() {
        // signal (reused, 8 B), window (per call, 100 B -> stride 128), window (reused).
        let (off, size) = window_layout(&[(8, false), (100, true), (4, false)], 3);
        assert_eq!(off, vec![0, 64, 64 + 128 * 2 + 128]);
        assert_eq!(size, 64 + 128 * 2 + 128 + 64 + 64);
        let (off1, _) = window_layout(&[(8, false), (100, true), (4, false)], 1);
        assert_eq!(off1, vec![0, 64, 192]);
    }
}
