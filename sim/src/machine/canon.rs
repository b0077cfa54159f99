//! Canonicalisation: renumbering epochs so states that differ only in
//! absolute epoch values become one state.

use super::state::{Clock, State, Status};
use super::Machine;

impl Machine<'_> {
    /// Renumbers every epoch of every process to its rank among the epochs of
    /// that process still recorded in the state (its current epoch, epochs of
    /// recorded window accesses, call-entry epochs still to be checked). Every
    /// comparison the race and barrier checks make is between a clock entry
    /// and a recorded epoch, and the renumbering preserves all of those, so
    /// states that differ only in absolute epoch values become one state.
    pub fn canonicalize(&self, s: &mut State) {
        let np = s.procs.len();
        // A process's current epoch is still to be recorded unless a release ended it.
        let mut sets: Vec<Vec<u32>> = (0..np)
            .map(|q| {
                if s.procs[q].bump {
                    Vec::new()
                } else {
                    vec![s.procs[q].clock[q]]
                }
            })
            .collect();
        // Call-entry epochs are needed while some process may still leave that call.
        let live = s
            .procs
            .iter()
            .map(|q| match q.status {
                Status::Run => q.call as usize,
                Status::CallDone => q.call as usize + 1,
                Status::Finished | Status::Fault => usize::MAX,
            })
            .min()
            .unwrap_or(usize::MAX);
        for (q, pr) in s.procs.iter_mut().enumerate() {
            for (c, e) in pr.entries.iter_mut().enumerate() {
                if c < live {
                    *e = 0;
                } else if *e != 0 {
                    sets[q].push(*e);
                }
            }
        }
        for m in &s.mem {
            for (_, rec) in &m.acc.segs {
                for a in rec.write.iter().chain(rec.reads.iter()) {
                    sets[a.proc as usize].push(a.epoch);
                }
            }
        }
        for v in sets.iter_mut() {
            v.sort_unstable();
            v.dedup();
        }
        let f = |q: usize, v: u32| sets[q].partition_point(|e| *e <= v) as u32;
        let fix = |c: &mut Clock| {
            for (q, x) in c.iter_mut().enumerate() {
                *x = f(q, *x);
            }
        };
        for pr in s.procs.iter_mut() {
            fix(&mut pr.clock);
        }
        for (q, pr) in s.procs.iter_mut().enumerate() {
            for e in pr.entries.iter_mut().filter(|e| **e != 0) {
                *e = f(q, *e);
            }
        }
        for c in s.cells.iter_mut() {
            fix(&mut c.clock);
            for u in c.units.iter_mut() {
                fix(&mut u.clock);
            }
            for h in c.history.iter_mut() {
                fix(&mut h.clock);
                for u in h.units.iter_mut() {
                    fix(&mut u.clock);
                }
            }
        }
        for m in s.mem.iter_mut() {
            for (_, rec) in m.acc.segs.iter_mut() {
                if let Some(w) = rec.write.as_mut() {
                    w.epoch = f(w.proc as usize, w.epoch);
                }
                for r in rec.reads.iter_mut() {
                    r.epoch = f(r.proc as usize, r.epoch);
                }
            }
            m.acc.normalize();
        }
    }
}
