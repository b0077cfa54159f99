//! A tile whose size has no bound the C++ backends can lay out (more than 16 Mi elements over
//! the parameter domains) is refused by every C++ target with `backend::tile-shape` on the
//! tile's declaration, naming the tile and the fix; the same protocol with the bound in range
//! emits.

use collc_backend::cpp::{emit, EmitOptions, Target};
use collc_backend::testing::repo_root;
use collc_grammar::Diagnostic;

/// Emits for the three C++ targets: Ascend and host (`cpp::emit`) and MPI (`mpi::emit`).
fn emit_all(p: &collc_spec::Validated) -> Vec<(&'static str, Result<String, Vec<Diagnostic>>)> {
    vec![
        ("ascend", emit(p, Target::Ascend, &EmitOptions::default())),
        ("host", emit(p, Target::Host, &EmitOptions::default())),
        ("mpi", collc_backend::mpi::emit(p, &Default::default())),
    ]
}

/// examples/incore_reduce_scatter.coll (one tile per row of `m` elements) with the row
/// width's domain replaced by `dom`.
fn with_row_domain(dom: &str) -> (String, collc_spec::Validated) {
    let text = std::fs::read_to_string(repo_root().join("examples/incore_reduce_scatter.coll"))
        .expect("readable");
    let decl = "param m: int in 1..=65536;";
    assert!(text.contains(decl), "the example declares {decl}");
    let text = text.replace(decl, &format!("param m: int in {dom};"));
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("the front end accepts the wider domain");
    (text, p)
}

fn tile_shape_errors(ds: &[Diagnostic]) -> Vec<&Diagnostic> {
    ds.iter()
        .filter(|d| d.code == "backend::tile-shape")
        .collect()
}

#[test]
fn an_unbounded_tile_is_refused_on_its_declaration_by_every_cpp_target() {
    let (text, p) = with_row_domain("1..=33554432");
    for (target, out) in emit_all(&p) {
        let errs = out.expect_err("a tile of up to 32 Mi elements cannot be laid out");
        let shape = tile_shape_errors(&errs);
        // Both tiles, `acc` and `recv`, are sized by the row width.
        assert_eq!(shape.len(), 2, "{target}: {errs:?}");
        for (d, name) in shape.iter().zip(["acc", "recv"]) {
            assert!(
                d.message.contains(&format!("tile `{name}`")),
                "{}",
                d.message
            );
            assert!(d.message.contains("1..=16777216"), "{}", d.message);
            let span = d.labels.first().expect("a primary label").span;
            let line = text[span.start..span.end].to_string();
            assert!(
                line.contains(name),
                "{target}: label on `{line}`, not on tile {name}"
            );
            assert!(
                d.help.as_deref().is_some_and(|h| h.contains("const")),
                "{d:?}"
            );
        }
    }
}

#[test]
fn the_same_tile_with_its_domain_in_range_emits() {
    let (_, p) = with_row_domain("1..=16777216");
    for (target, out) in emit_all(&p) {
        assert!(out.is_ok(), "{target}: {:?}", out.err());
    }
}
