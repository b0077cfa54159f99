//! `collc tune`'s report: the load of each run, every measured figure, the decision table.

use collc_backend::library::tune::Tuned;

/// The report as text.
pub fn text(t: &Tuned, name: &str) -> String {
    let mut s = String::new();
    for (np, before, after) in &t.loads {
        s.push_str(&format!("np {np}: load {before} before, {after} after\n"));
    }
    s.push_str("kind P count protocol median_us_per_call\n");
    for m in &t.measurements {
        s.push_str(&format!(
            "{} {} {} {} {:.3}\n",
            m.kind, m.p, m.count, m.protocol, m.us
        ));
    }
    s.push_str(&format!(
        "decision table ({}):\n",
        t.installed.dir.join(format!("{name}.tune")).display()
    ));
    for r in &t.table.rules {
        s.push_str(&format!("{} {} {} {}\n", r.kind, r.p, r.count, r.protocol));
    }
    s.push_str(&format!("built {}\n", t.installed.library.display()));
    s
}
