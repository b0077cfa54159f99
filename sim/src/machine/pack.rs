//! Packed records: each part of a state (a process, a cell, a window) written as one
//! flat run of `u32` words, so that the explorer's table of distinct parts
//! ([`crate::visited`]) stores every part it has met as one contiguous record, hashes
//! a candidate word by word and compares it with one `memcmp`.
//!
//! The record of a part is injective: every field its equality compares is written,
//! and every variable-length field with its length first, so two parts have equal
//! records exactly when they are equal. Fields that take no part in equality (the
//! cached fingerprints and derived memos) are not written.

use super::clocks::Clocks;
use super::state::{
    Acc, AccRec, Cell, InFlight, OldCell, Origin, Pending, Proc, Status, Tiles, Unit, WinMem,
};
use crate::value::{Contrib, Segs, Val};
use collc_spec::ir::ReduceOp;

/// A value written into a packed record.
pub trait Pack {
    /// Appends the value's words to `out`.
    fn pack(&self, out: &mut Vec<u32>);
}

impl Pack for u32 {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        out.push(*self);
    }
}

impl Pack for u16 {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        out.push(u32::from(*self));
    }
}

impl Pack for bool {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        out.push(u32::from(*self));
    }
}

impl Pack for u64 {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        out.extend_from_slice(&[*self as u32, (*self >> 32) as u32]);
    }
}

impl Pack for i64 {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        (*self as u64).pack(out)
    }
}

impl Pack for u128 {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        (*self as u64).pack(out);
        ((*self >> 64) as u64).pack(out);
    }
}

impl<T: Pack> Pack for Option<T> {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        match self {
            None => out.push(0),
            Some(x) => {
                out.push(1);
                x.pack(out);
            }
        }
    }
}

/// A length, then the elements.
impl<T: Pack> Pack for [T] {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        out.push(self.len() as u32);
        for x in self {
            x.pack(out);
        }
    }
}

impl<T: Pack> Pack for Vec<T> {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        self[..].pack(out)
    }
}

impl<A: Pack, B: Pack> Pack for (A, B) {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        self.0.pack(out);
        self.1.pack(out);
    }
}

/// A slice of `u32` is copied as it is, after its length.
#[inline]
fn words(w: &[u32], out: &mut Vec<u32>) {
    out.push(w.len() as u32);
    out.extend_from_slice(w);
}

/// A slice of `i64`, after its length: two words each, low first.
#[inline]
fn i64s(v: &[i64], out: &mut Vec<u32>) {
    out.push(v.len() as u32);
    let at = out.len();
    out.resize(at + 2 * v.len(), 0);
    for (d, x) in out[at..].chunks_exact_mut(2).zip(v) {
        d[0] = *x as u32;
        d[1] = (*x as u64 >> 32) as u32;
    }
}

impl Pack for Contrib {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Contrib {
            rank,
            win,
            call,
            shift,
        } = *self;
        out.extend_from_slice(&[u32::from(rank) << 16 | u32::from(win), u32::from(call)]);
        shift.pack(out);
    }
}

impl Pack for Val {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        self.0.pack(out)
    }
}

impl<T: Pack> Pack for Segs<T> {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        self.len.pack(out);
        self.segs.pack(out);
    }
}

impl Pack for Acc {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Acc {
            proc,
            epoch,
            call,
            what,
        } = *self;
        out.extend_from_slice(&[u32::from(proc) << 16 | u32::from(call), epoch, what]);
    }
}

impl Pack for AccRec {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        self.write.pack(out);
        self.reads.pack(out);
    }
}

impl Pack for Origin {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Origin { call, writer, stmt } = *self;
        out.extend_from_slice(&[u32::from(call) << 16 | u32::from(writer), stmt]);
    }
}

impl Pack for Unit {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Unit {
            call,
            writer,
            seq,
            stmt,
            clock,
            amount,
            counted,
        } = self;
        // The words `amount.pack` and `counted.pack` would append, in one copy.
        let (a, c) = (*amount as u64, *counted);
        out.extend_from_slice(&[
            u32::from(*call) << 16 | u32::from(*writer),
            *seq,
            *stmt,
            *clock,
            a as u32,
            (a >> 32) as u32,
            c as u32,
            (c >> 32) as u32,
            (c >> 64) as u32,
            (c >> 96) as u32,
        ]);
    }
}

impl Pack for OldCell {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let OldCell {
            version,
            value,
            units,
            clock,
            origin,
        } = self;
        version.pack(out);
        value.pack(out);
        units.pack(out);
        words(clock, out);
        origin.pack(out);
    }
}

impl Pack for Pending {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Pending {
            rank,
            win,
            lo,
            pieces,
            stmt,
            read,
        } = self;
        out.extend_from_slice(&[u32::from(*rank) << 16 | u32::from(*win), *stmt]);
        lo.pack(out);
        pieces.pack(out);
        read.pack(out);
    }
}

impl Pack for InFlight {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let InFlight {
            rank,
            win,
            lo,
            len,
            op,
            tile,
        } = self;
        let op = match op {
            None => 0,
            Some(ReduceOp::Sum) => 1,
            Some(ReduceOp::Max) => 2,
            Some(ReduceOp::Min) => 3,
            Some(ReduceOp::Prod) => 4,
        };
        out.extend_from_slice(&[
            u32::from(*rank) << 16 | u32::from(*win),
            op << 1 | u32::from(*tile),
        ]);
        lo.pack(out);
        len.pack(out);
    }
}

impl Pack for Status {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        out.push(match self {
            Status::Run => 0,
            Status::CallDone => 1,
            Status::Finished => 2,
            Status::Fault => 3,
        });
    }
}

impl Pack for Tiles {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        self.bufs().pack(out)
    }
}

impl Pack for Proc {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Proc {
            status,
            pc,
            call,
            slots,
            clock,
            bump,
            seq,
            tiles,
            pending,
            cache,
            steps,
            entries,
            pin,
            fp: _,
            wait: _,
        } = self;
        status.pack(out);
        out.extend_from_slice(&[*pc, u32::from(*call) << 1 | u32::from(*bump), *seq, *steps]);
        i64s(slots, out);
        words(clock, out);
        words(entries, out);
        pin.pack(out);
        cache.pack(out);
        pending.pack(out);
        tiles.pack(out);
    }
}

impl Pack for Cell {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let Cell {
            value,
            units,
            clock,
            version,
            origin,
            history,
            fp: _,
        } = self;
        value.pack(out);
        version.pack(out);
        origin.pack(out);
        words(clock, out);
        units.pack(out);
        history.pack(out);
    }
}

impl Pack for WinMem {
    #[inline]
    fn pack(&self, out: &mut Vec<u32>) {
        let WinMem {
            vals,
            acc,
            fp: _,
            epochs: _,
        } = self;
        vals.pack(out);
        acc.pack(out);
    }
}

/// A unit with its clock's entries in place of its clock's number.
fn unit_resolved(u: &Unit, clocks: &Clocks, out: &mut Vec<u32>) {
    Unit { clock: 0, ..*u }.pack(out);
    words(clocks.get(u.clock), out);
}

fn units_resolved(units: &[Unit], clocks: &Clocks, out: &mut Vec<u32>) {
    out.push(units.len() as u32);
    for u in units {
        unit_resolved(u, clocks, out);
    }
}

/// A cell's record with its units' clocks written out instead of numbered: injective
/// like [`Pack`], and independent of the order the search met the clocks in (for
/// fingerprints that two searches compare).
pub(super) fn cell_resolved(c: &Cell, clocks: &Clocks, out: &mut Vec<u32>) {
    let Cell {
        value,
        units,
        clock,
        version,
        origin,
        history,
        fp: _,
    } = c;
    value.pack(out);
    version.pack(out);
    origin.pack(out);
    words(clock, out);
    units_resolved(units, clocks, out);
    out.push(history.len() as u32);
    for h in history {
        let OldCell {
            version,
            value,
            units,
            clock,
            origin,
        } = h;
        version.pack(out);
        value.pack(out);
        units_resolved(units, clocks, out);
        words(clock, out);
        origin.pack(out);
    }
}

#[cfg(test)]
mod tests {
    use super::{Pack, Unit};

    /// A unit's record is its fields' records in order (the one copy `Unit::pack`
    /// makes is the words the field-by-field packing appends).
    #[test]
    fn unit_record_is_its_fields_records() {
        for (amount, counted) in [
            (1i64, 0u128),
            (-3, 1),
            (i64::MAX, u128::MAX),
            (i64::MIN, 1 << 100 | 1 << 37 | 5),
        ] {
            let u = Unit {
                call: 3,
                writer: 7,
                seq: 11,
                stmt: 13,
                clock: 17,
                amount,
                counted,
            };
            let mut want = vec![3 << 16 | 7, 11, 13, 17];
            amount.pack(&mut want);
            counted.pack(&mut want);
            let mut got = Vec::new();
            u.pack(&mut got);
            assert_eq!(got, want);
        }
    }
}
