//! A trace as a picture: one lane per rank (or block), time left to right,
//! notify arrows between lanes, wait bars labelled with the value read, call
//! boundaries, and the failing event marked in red.

use crate::report::{EvKind, Event, Finding, SimReport};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const COL: f64 = 16.0;
const LANE: f64 = 70.0;
const LEFT: f64 = 110.0;
const TOP: f64 = 70.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders a trace as a standalone SVG document.
pub fn render(report: &SimReport, trace: &[Event], finding: Option<&Finding>) -> String {
    let mut lanes: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for e in trace {
        lanes.entry((e.rank, e.block.unwrap_or(0))).or_insert(0);
    }
    for (i, v) in lanes.values_mut().enumerate() {
        *v = i;
    }
    let width = LEFT + COL * (trace.len() as f64 + 4.0) + 40.0;
    let height = TOP + LANE * lanes.len().max(1) as f64 + 40.0;
    let mut c = Canvas {
        s: String::new(),
        lanes,
        width,
    };
    c.head(report, finding, height);
    c.lane_lines(trace);
    // Where each lane's process arrived at its current statement (for wait bars).
    let mut since: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    for (i, e) in trace.iter().enumerate() {
        let key = (e.rank, e.block.unwrap_or(0));
        let marked = e.mark.is_some();
        let at = At {
            x: LEFT + COL * (i as f64 + 1.0),
            y: TOP + LANE * c.lanes[&key] as f64,
            color: if marked { "#d00" } else { "#333" },
            marked,
            tip: esc(&format!(
                "step {} call {}: {}{}",
                e.step,
                e.call,
                e.text,
                e.line.map(|l| format!(" (line {l})")).unwrap_or_default()
            )),
        };
        c.event(e, &at, since.get(&key).copied());
        if let Some(m) = &e.mark {
            let _ = writeln!(
                c.s,
                "<circle cx=\"{}\" cy=\"{}\" r=\"8\" fill=\"none\" stroke=\"#d00\" stroke-width=\"2\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#d00\">{}</text>",
                at.x,
                at.y,
                at.x + 10.0,
                at.y - 10.0,
                esc(m)
            );
        }
        since.insert(key, at.x);
    }
    c.s.push_str("</svg>\n");
    c.s
}

/// The document being drawn: one lane per (rank, block), in order.
struct Canvas {
    s: String,
    lanes: BTreeMap<(u32, u32), usize>,
    width: f64,
}

/// Where an event is drawn (its lane's `y`, its step's `x`), in which colour, with
/// which tooltip, and whether it is the failing event.
struct At {
    x: f64,
    y: f64,
    color: &'static str,
    tip: String,
    marked: bool,
}

impl Canvas {
    /// The `<svg>` element's opening, the title line, the legend and the arrow marker.
    fn head(&mut self, report: &SimReport, finding: Option<&Finding>, height: f64) {
        let (s, width) = (&mut self.s, self.width);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="monospace" font-size="10">"#
        );
        let title = match finding {
            Some(f) => format!("{} — {}: {}", report.verdict_line(), f.code, f.message),
            None => report.verdict_line(),
        };
        let _ = writeln!(
            s,
            r#"<text x="8" y="16" font-size="11">{}</text>"#,
            esc(&title)
        );
        let _ = writeln!(
            s,
            r##"<text x="8" y="32" fill="#555">time flows right; arrows: notifies (value after); bars: waits (value read); red: the failing event</text>"##
        );
        let _ = writeln!(
            s,
            "<defs><marker id=\"a\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#1f5fbf\"/></marker></defs>"
        );
    }

    /// Each lane's line and name.
    fn lane_lines(&mut self, trace: &[Event]) {
        let blocks = trace.iter().any(|e| e.block.is_some());
        for (&(r, b), &i) in &self.lanes {
            let y = TOP + LANE * i as f64;
            let name = if blocks {
                format!("rank {r} blk {b}")
            } else {
                format!("rank {r}")
            };
            let _ = writeln!(
                self.s,
                "<line x1=\"{LEFT}\" y1=\"{y}\" x2=\"{:.0}\" y2=\"{y}\" stroke=\"#bbb\"/><text x=\"8\" y=\"{:.0}\">{name}</text>",
                self.width - 20.0,
                y + 4.0
            );
        }
    }

    /// One event's shape; `since` is where its lane's process arrived at its current
    /// statement (a wait's bar starts there).
    fn event(&mut self, e: &Event, at: &At, since: Option<f64>) {
        let (x, y, color, tip) = (at.x, at.y, at.color, &at.tip);
        let s = &mut self.s;
        match &e.kind {
            EvKind::Notify { to, after, .. } => self.notify(e, *to, *after, at),
            EvKind::WaitPass {
                value, threshold, ..
            }
            | EvKind::WaitBlocked {
                value, threshold, ..
            } => {
                let blocked = matches!(e.kind, EvKind::WaitBlocked { .. });
                self.wait(
                    at,
                    since,
                    blocked,
                    esc(&format!("≥{threshold} read {value}")),
                );
            }
            EvKind::WaitPinned { value, .. } => {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"#e08a00\" stroke=\"{color}\"><title>{tip}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#e08a00\">{}</text>",
                    x - 3.5,
                    y - 3.5,
                    x - 3.0,
                    y - 8.0,
                    esc(&format!("pins {value}"))
                );
            }
            EvKind::CallStart => {
                let _ = writeln!(
                    s,
                    "<line x1=\"{x}\" y1=\"{:.1}\" x2=\"{x}\" y2=\"{:.1}\" stroke=\"#888\" stroke-dasharray=\"2,2\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#888\">c{}</text>",
                    y - 14.0,
                    y + 14.0,
                    x + 2.0,
                    y - 16.0,
                    e.call
                );
            }
            EvKind::Stage | EvKind::Consume { .. } => {
                let _ = writeln!(
                    s,
                    "<path d=\"M{x},{:.1} L{:.1},{y} L{x},{:.1} L{:.1},{y} z\" fill=\"{}\"><title>{tip}</title></path>",
                    y - 5.0,
                    x + 5.0,
                    y + 5.0,
                    x - 5.0,
                    if at.marked { "#d00" } else { "#999" }
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"5\" height=\"5\" fill=\"{color}\"><title>{tip}</title></rect>",
                    x - 2.5,
                    y - 2.5
                );
            }
        }
    }

    /// A notify: an arrow to the lane of rank `to` labelled with the value after it
    /// (the label alone when the lane is its own), and a dot.
    fn notify(&mut self, e: &Event, to: u32, after: i64, at: &At) {
        let (x, y, color, tip) = (at.x, at.y, at.color, &at.tip);
        let s = &mut self.s;
        let ty = TOP
            + LANE
                * self
                    .lanes
                    .get(&(to, e.block.unwrap_or(0)))
                    .copied()
                    .unwrap_or(0) as f64;
        if (ty - y).abs() > 0.5 {
            let dy = if ty > y { -6.0 } else { 6.0 };
            let _ = writeln!(
                s,
                "<line x1=\"{x}\" y1=\"{y}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f5fbf\" marker-end=\"url(#a)\"><title>{tip}</title></line>",
                x + COL * 0.6,
                ty + dy
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#1f5fbf\">{after}</text>",
                x + COL * 0.6 + 2.0,
                ty + dy + if dy < 0.0 { -2.0 } else { 9.0 }
            );
        } else {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#1f5fbf\">{after}</text>",
                x - 3.0,
                y - 8.0
            );
        }
        let _ = writeln!(
            s,
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"3\" fill=\"{color}\"><title>{tip}</title></circle>"
        );
    }

    /// A wait: a bar from where the process arrived (to the right edge when it is
    /// blocked forever), labelled `label`.
    fn wait(&mut self, at: &At, since: Option<f64>, blocked: bool, label: String) {
        let (x, y, color, tip) = (at.x, at.y, at.color, &at.tip);
        let x0 = since.unwrap_or(x - COL).min(x);
        let x1 = if blocked { self.width - 20.0 } else { x };
        let fill = if blocked || at.marked {
            "#f3b0b0"
        } else {
            "#cfe3cf"
        };
        let _ = writeln!(
            self.s,
            "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"10\" fill=\"{fill}\" stroke=\"{color}\"><title>{tip}</title></rect>",
            y + 4.0,
            (x1 - x0).max(3.0)
        );
        let _ = writeln!(
            self.s,
            "<text x=\"{x0:.1}\" y=\"{:.1}\" fill=\"{color}\">{label}{}</text>",
            y + 24.0,
            if blocked { " (forever)" } else { "" }
        );
    }
}
