//! The enumerated route's loop split on branch conditions over a loop variable whose trip
//! count is symbolic (`engine/exec.rs`, verifier/README.md "summarised loops"): `==`, `!=`,
//! `&&`, `||` and `!` of comparisons of the loop variable with loop-invariant values are
//! split at each comparison the pieces do not decide yet, up to `SPLIT_MAX` cut points;
//! past that the configuration is `unknown`, naming the condition and the rewrite.

use collc_verifier::Status;

/// A one-root broadcast whose root signals every peer once, on the chunk `COND` selects.
fn protocol(cond: &str) -> collc_spec::Validated {
    let text = format!(
        "collective split_forms: broadcast(root, data) {{
    ranks P in 1..=4;
    param root: rank;
    param n: int in 1..=65536;
    const CH = 256;
    let T = ceil(n / CH);
    signal sig[1];
    signal ready[P];
    window data: f32[n] reused;

    body {{
        if me == root {{
            for q in peers {{
                wait ready[q] >= 1;
            }}
            for t in 0..T {{
                let base = t * CH;
                let len = min(CH, n - base);
                for q in peers {{
                    put data[base .. base + len] @ q <- data[base .. base + len];
                }}
                if {cond} {{
                    fence;
                    for q in peers {{
                        notify sig[0] @ q += 1;
                    }}
                }}
            }}
        }} else {{
            notify ready[me] @ root += 1;
            wait sig[0] >= 1;
        }}
    }}

    epilogue {{
        if me == root {{
            for q in peers {{
                notify ready[q] -= 1;
            }}
        }} else {{
            notify sig[0] -= 1;
        }}
    }}
}}
"
    );
    let c = collc_spec::front(&collc_verifier::Ranges, &text);
    c.protocol
        .unwrap_or_else(|| panic!("{cond}: {:#?}", c.diagnostics))
}

fn enumerate(cond: &str) -> collc_verifier::Report {
    let opts = collc_verifier::check::Options {
        timeout_ms: 120_000,
    };
    collc_verifier::check::verify(&protocol(cond), &opts)
}

/// Conditions that select exactly the last chunk: each is split and the credit
/// obligations are decided by enumeration (one credit per call: proved).
#[test]
fn conditions_on_the_loop_variable_are_split() {
    for cond in [
        "t == T - 1",
        "t + 1 >= T && t != T",
        "!(t != T - 1)",
        "t == T - 1 || t >= T",
    ] {
        let r = enumerate(cond);
        for id in ["credit-balance", "stale-credit", "wait-reachable"] {
            let o = r.get(id).expect(id);
            assert!(
                matches!(o.status, Status::Proved | Status::Checked),
                "`{cond}`: {id} is {:?}: {:?}",
                o.status,
                o.reason
            );
        }
    }
}

/// A condition that needs more cut points than the split makes is `unknown`, and the reason
/// names the condition's loop and the rewrite.
#[test]
fn past_the_cut_limit_is_unknown_naming_the_rewrite() {
    let r = enumerate("t == 0 || t == 2 || t == 4");
    let o = r.get("credit-balance").expect("credit-balance");
    assert_eq!(o.status, Status::Unknown, "{:?}", o.reason);
    let why = o.reason.clone().unwrap_or_default();
    assert!(
        why.contains("more than 4 points") && why.contains("consecutive loops"),
        "{why}"
    );
}
