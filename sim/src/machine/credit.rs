//! A counter cell's credit units, accounted by count (sim/README.md, "Cells"): a
//! take-back of call `d` (a negative `AtomicAdd`) takes back credits of calls up to `d`,
//! oldest first; what it finds missing — credits of its call still in flight — is a
//! debt of call `d`, and those late credits pay it off when they arrive instead of
//! standing as credits of their own. So the units of a cell are, per call, the credits
//! that arrived less the ones taken back, and a wait counts a credit of another call
//! only when, by count, its own call's credits do not reach its threshold.

use super::state::{insert_unit, Unit};

/// Adds the positive credit `u`: it first pays off the debts of take-backs of its call
/// or a later one, oldest first (each such take-back ran before `u` arrived and took it
/// back by count); what is left stays as a unit.
pub(super) fn add(units: &mut Vec<Unit>, mut u: Unit) {
    let mut i = 0;
    while u.amount > 0 && i < units.len() {
        let d = &mut units[i];
        if d.amount < 0 && d.call >= u.call {
            let pay = u.amount.min(-d.amount);
            d.amount += pay;
            u.amount -= pay;
            if d.amount == 0 {
                units.remove(i);
                continue;
            }
        }
        i += 1;
    }
    if u.amount > 0 {
        insert_unit(units, u);
    }
}

/// Takes back `-debt.amount` (> 0) for the take-back `debt` (its call, writer,
/// statement): from the positive units of its call and earlier calls, oldest first;
/// what they do not cover stays as `debt` with the missing amount.
pub(super) fn take_back(units: &mut Vec<Unit>, mut debt: Unit) {
    let mut need = -debt.amount;
    let mut i = 0;
    while need > 0 && i < units.len() && units[i].call <= debt.call {
        let u = &mut units[i];
        if u.amount > 0 {
            let take = u.amount.min(need);
            u.amount -= take;
            need -= take;
            if u.amount == 0 {
                units.remove(i);
                continue;
            }
        }
        i += 1;
    }
    if need > 0 {
        debt.amount = -need;
        insert_unit(units, debt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(call: u16, writer: u16, seq: u32, amount: i64) -> Unit {
        Unit {
            call,
            writer,
            seq,
            stmt: 0,
            amount,
            counted: 0,
            clock: 0,
        }
    }

    fn shape(units: &[Unit]) -> Vec<(u16, u16, i64)> {
        units.iter().map(|u| (u.call, u.writer, u.amount)).collect()
    }

    /// One writer (1) crediting twice per call, the owner (2) taking both back after
    /// counting the first: the second arrives late and pays the debt, and the next
    /// call's credit stands alone.
    #[test]
    fn a_late_credit_pays_the_debt_of_its_take_back() {
        let mut c = Vec::new();
        add(&mut c, unit(0, 1, 0, 1));
        take_back(&mut c, unit(0, 2, 0, -2));
        assert_eq!(shape(&c), [(0, 2, -1)]);
        add(&mut c, unit(0, 1, 1, 1));
        assert!(c.is_empty());
        add(&mut c, unit(1, 1, 2, 1));
        assert_eq!(shape(&c), [(1, 1, 1)]);
    }

    /// A credit of a later call does not pay the debt of an earlier take-back, and a
    /// take-back does not take a later call's credit.
    #[test]
    fn calls_are_kept_apart() {
        let mut c = Vec::new();
        take_back(&mut c, unit(0, 2, 0, -1));
        add(&mut c, unit(1, 1, 0, 1));
        assert_eq!(shape(&c), [(0, 2, -1), (1, 1, 1)]);
        take_back(&mut c, unit(0, 2, 1, -1));
        assert_eq!(shape(&c), [(0, 2, -1), (0, 2, -1), (1, 1, 1)]);
        add(&mut c, unit(0, 3, 0, 3));
        assert_eq!(shape(&c), [(0, 3, 1), (1, 1, 1)]);
    }
}
