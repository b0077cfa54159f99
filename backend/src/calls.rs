//! `calls <= N` is part of the verified domain, like the world size: every runner refuses a
//! run of more back-to-back calls than the protocol declares, before building anything, with
//! a diagnostic at the declaration. (Emitted host and MPI kernels and the libraries refuse
//! call N + 1 themselves too: `COLLC_CALLS_BOUND`, `ctx.call < N`, `CollSpec::max_calls`.)

use collc_grammar::Diagnostic;
use collc_spec::ir::Protocol;

/// The refusal of `calls` back-to-back calls of `p`, if they exceed its `calls <= N`.
pub fn refusal(p: &Protocol, calls: u32) -> Option<Diagnostic> {
    let b = p.calls?;
    (i64::from(calls) > b.max).then(|| {
        Diagnostic::error(
            "run::calls-bound",
            format!(
                "{calls} back-to-back calls are outside the verified domain: the protocol declares `calls <= {}`",
                b.max
            ),
        )
        .with_primary(b.span, format!("call {} and later are not verified", b.max + 1))
        .with_help(format!("run at most {} calls (`--calls {}`)", b.max, b.max))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(calls: &str) -> Protocol {
        let text = format!(
            "collective barrier: barrier() {{\n    ranks P in 1..=8;\n    {calls}\n    signal sig[P];\n    body {{\n        for p in peers {{ notify sig[me] @ p += 1; }}\n        for p in peers {{ wait sig[p] >= 1; }}\n    }}\n    epilogue {{\n        for p in peers {{ notify sig[p] -= 1; }}\n    }}\n}}\n"
        );
        collc_spec::lowered(&text).protocol.expect("checks")
    }

    #[test]
    fn a_run_past_the_declared_calls_is_refused_at_the_declaration() {
        let p = protocol("calls <= 3;");
        assert!(refusal(&p, 3).is_none());
        let d = refusal(&p, 4).expect("refused");
        assert!(d.is_error());
        assert_eq!(d.primary_span(), p.calls.map(|b| b.span));
        assert!(refusal(&protocol(""), 1000).is_none());
    }
}
