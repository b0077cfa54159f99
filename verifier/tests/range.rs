//! The range obligations of the front end (`collc_spec::front` with
//! `collc_verifier::Ranges`): what the facts of the protocol prove (guards, loop steps,
//! `peers`, `else` branches, blocks, `require`s) and what they do not. Each
//! case is a body; the codes it must yield are listed.

/// The one front end, with the verifier's range pass.
fn validate(text: &str) -> collc_spec::Checked {
    collc_spec::front(&collc_verifier::Ranges, text)
}

fn codes(decls: &str, body: &str) -> Vec<String> {
    let text = format!(
        "collective t: barrier() {{\n    ranks P in 2..=16;\n    param n: int in 1..=4096;\n    signal sig[P];\n    window data: f32[n];\n{decls}\n    body {{\n{body}\n    }}\n}}\n"
    );
    validate(&text)
        .diagnostics
        .iter()
        .map(|d| d.code.clone())
        .collect()
}

const SLICE: &str = "domain::slice-out-of-range";
const INDEX: &str = "domain::index-out-of-range";

#[test]
fn an_early_return_guards_the_rest_of_the_body_and_the_epilogue() {
    let copy = "copy data[n - 4 .. n] <- data[n - 4 .. n];";
    assert_eq!(codes("", copy), [SLICE, SLICE]);
    assert!(codes("", &format!("return if n < 4;\n{copy}")).is_empty());
    let text = format!(
        "collective t: barrier() {{\n    ranks P in 2..=16;\n    param n: int in 1..=4096;\n    signal sig[P];\n    window data: f32[n];\n    body {{\n        return if n < 4;\n    }}\n    epilogue {{\n        {copy}\n    }}\n}}\n"
    );
    assert!(validate(&text).diagnostics.is_empty());
}

#[test]
fn a_constant_step_is_a_fact() {
    let body = "for off in 0..n step 4 {\n copy data[off .. off + 4] <- data[off .. off + 4];\n }";
    assert!(codes("    require n % 4 == 0;", body).is_empty());
    // Without the require, the last tile runs past the end (n = 1: 0 .. 4).
    assert_eq!(codes("", body), [SLICE, SLICE]);
}

#[test]
fn a_symbolic_step_with_a_clamped_length_is_in_range() {
    let body = "for off in 0..n step c {\n let len = min(c, n - off);\n copy data[off .. off + len] <- data[off .. off + len];\n }";
    assert!(codes("    param c: int in 1..=64;", body).is_empty());
}

#[test]
fn peers_exclude_me_and_else_branches_negate_the_condition() {
    assert!(codes(
        "",
        "for p in peers {\n notify sig[(p - me - 1) % P] @ p += 1;\n }"
    )
    .is_empty());
    assert_eq!(codes("", "notify sig[me - 1] += 1;"), [INDEX]);
    assert!(codes(
        "",
        "if me == 0 {\n fence;\n } else {\n notify sig[me - 1] += 1;\n }"
    )
    .is_empty());
    assert!(codes("", "if me > 0 {\n notify sig[me - 1] += 1;\n }").is_empty());
}

#[test]
fn block_indices_stay_below_the_block_count() {
    let decls = "    param C: int in 1..=8;\n    param stride: int in 1..=8;\n    require stride >= C;\n    blocks blk in 0..C;\n    signal lanes[P][stride];";
    assert!(codes(decls, "notify lanes[me][blk] += 1;").is_empty());
    let loose = decls.replace("    require stride >= C;\n", "");
    assert_eq!(codes(&loose, "notify lanes[me][blk] += 1;"), [INDEX]);
}

#[test]
fn the_counterexample_is_the_smallest() {
    let text = "collective t: barrier() {\n    ranks P in 2..=16;\n    param n: int in 1..=4096;\n    signal sig[P];\n    body {\n        for t in 0..n {\n            notify sig[t] += 1;\n        }\n    }\n}\n";
    let d = validate(text).diagnostics;
    assert_eq!(d.len(), 1);
    assert!(
        d[0].message.contains("for P = 2, n = 3, t = 2"),
        "{}",
        d[0].message
    );
}

/// The diagnostics of a body over a wide world domain (P up to 65536, past any
/// enumeration), with `chunk = n / P` and a window `padded` of 16 spare elements.
fn wide(decls: &str, body: &str) -> Vec<collc_grammar::Diagnostic> {
    let text = format!(
        "collective t: barrier() {{\n    ranks P in 1..=65536;\n    param n: int in 1..=1048576;\n    const TILE = 256;\n{decls}\n    let chunk = n / P;\n    let tc = min(chunk, TILE);\n    signal sig[P];\n    window data: f32[n];\n    window padded: f32[n + 16];\n    tile acc: f32[TILE];\n    body {{\n{body}\n    }}\n}}\n"
    );
    validate(&text).diagnostics
}

const RING_SLICE: &str = "for s in 1..P {\n let idx = (me - s - 1) % P;\n for off in 0..chunk step tc {\n let base = idx * chunk + off;\n let len = min(tc, chunk - off);\n copy acc[0 .. len] <- data[base .. base + len];\n }\n }";

#[test]
fn a_rank_times_a_division_by_p_is_proved_for_every_p() {
    // `idx * (n / P) + off + len <= n`: nonlinear in P, proved with the division
    // and product facts (range/lemma.rs), for the whole domain.
    let d = wide("    require n % P == 0;", RING_SLICE);
    assert!(d.is_empty(), "{d:?}");
    // Without the require the chunks still fit (they round down).
    let d = wide("", RING_SLICE);
    assert!(d.is_empty(), "{d:?}");
    let whole = "for idx in ranks {\n copy data[idx * chunk .. (idx + 1) * chunk] <- data[(idx + 1) * chunk - chunk .. idx * chunk + chunk];\n }";
    let d = wide("", whole);
    assert!(d.is_empty(), "{d:?}");
}

fn messages(d: &[collc_grammar::Diagnostic]) -> Vec<(String, String)> {
    d.iter()
        .map(|d| (d.code.clone(), d.message.clone()))
        .collect()
}

#[test]
fn a_length_one_too_long_is_violated() {
    let body = RING_SLICE.replace("min(tc, chunk - off)", "min(tc, chunk - off) + 1");
    let d = wide("    require n % P == 0;", &body);
    let m = messages(&d);
    assert!(m.iter().any(|(c, _)| c == SLICE), "{m:?}");
    assert!(
        m.iter().all(|(c, _)| c != "domain::range-unproved"),
        "{m:?}"
    );
}

#[test]
fn an_overrun_only_past_sixteen_ranks_is_violated_at_its_smallest_p() {
    // A one-element gap after each chunk overruns n by P - 1: the padding of 16
    // covers P <= 17 only.
    let gap = "for idx in ranks {\n copy padded[idx * (chunk + 1) .. idx * (chunk + 1) + chunk] <- data[0 .. chunk];\n }";
    let m = messages(&wide("    require n % P == 0;", gap));
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].0, SLICE);
    assert!(m[0].1.contains("for P = 18, n = 18, idx = 17"), "{m:?}");
    // Chunks rounded up overrun n by up to P - 1 as well.
    let ceil = "for idx in ranks {\n copy padded[idx * ceil(n / P) .. (idx + 1) * ceil(n / P)] <- data[0 .. chunk];\n }";
    let m = messages(&wide("", ceil));
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].0, SLICE);
    assert!(m[0].1.contains("for P = 18, n = 1, idx = 17"), "{m:?}");
    // Clamped, they are in range for every P.
    let clamped = "for idx in ranks {\n copy data[min(idx * ceil(n / P), n) .. min((idx + 1) * ceil(n / P), n)] <- data[0 .. chunk];\n }";
    let d = wide("", clamped);
    assert!(d.is_empty(), "{d:?}");
}

/// Chunked slices `lo .. hi` of a window of `n + pad` elements, for every `idx` in `0..P`,
/// decided over `ranks P in 1..=65536`, against a search over P <= 100 and n <= 400: a
/// bound the search breaks is an error, one it does not break is proved.
#[test]
fn nonlinear_chunk_bounds_agree_with_a_search() {
    type Bound = fn(i64, i64, i64, i64) -> (i64, i64);
    let floor: Bound = |idx, p, n, d| (idx * (n / p), idx * (n / p) + n / p + d);
    let ceil: Bound = |idx, p, n, _| {
        let c = (n + p - 1) / p;
        (idx * c, (idx + 1) * c)
    };
    let gap: Bound = |idx, p, n, d| (idx * (n / p + d), idx * (n / p + d) + n / p);
    let cases: [(&str, &str, Bound, i64, i64); 9] = [
        ("idx * (n / P)", "idx * (n / P) + n / P", floor, 0, 0),
        ("idx * (n / P)", "idx * (n / P) + n / P + 1", floor, 1, 0),
        ("idx * (n / P)", "idx * (n / P) + n / P + 1", floor, 1, 16),
        ("idx * ceil(n / P)", "(idx + 1) * ceil(n / P)", ceil, 0, 0),
        ("idx * ceil(n / P)", "(idx + 1) * ceil(n / P)", ceil, 0, 64),
        ("idx * (n / P + 1)", "idx * (n / P + 1) + n / P", gap, 1, 16),
        ("idx * (n / P + 1)", "idx * (n / P + 1) + n / P", gap, 1, 79),
        ("idx * (n / P)", "idx * (n / P) + n / P", floor, 0, 16),
        (
            "(P - 1 - idx) * (n / P)",
            "(P - idx) * (n / P)",
            |idx, p, n, _| ((p - 1 - idx) * (n / p), (p - idx) * (n / p)),
            0,
            0,
        ),
    ];
    for (lo, hi, f, d, pad) in cases {
        let broken = (1..=100i64).find_map(|p| {
            (1..=400i64).find_map(|n| {
                (0..p)
                    .find(|&i| {
                        let (l, h) = f(i, p, n, d);
                        l < 0 || l > h || h > n + pad
                    })
                    .map(|_| p)
            })
        });
        let text = format!(
            "collective t: barrier() {{\n    ranks P in 1..=65536;\n    param n: int in 1..=1048576;\n    signal sig[P];\n    window w: f32[n + {pad}];\n    body {{\n        for idx in ranks {{\n            copy w[{lo} .. {hi}] <- w[{lo} .. {hi}];\n        }}\n    }}\n}}\n"
        );
        let m = messages(&validate(&text).diagnostics);
        match broken {
            Some(p) => {
                assert_eq!(m.len(), 2, "{lo} .. {hi} of n + {pad}: {m:?}");
                for (c, msg) in &m {
                    assert_eq!(c, SLICE, "{lo} .. {hi} of n + {pad}: {m:?}");
                    assert!(
                        msg.contains(&format!("for P = {p},")),
                        "smallest P {p}: {msg}"
                    );
                }
            }
            None => assert!(m.is_empty(), "{lo} .. {hi} of n + {pad}: {m:?}"),
        }
    }
}
