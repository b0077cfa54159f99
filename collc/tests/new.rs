//! `collc new KIND NAME`: every kind's starting protocol verifies (exit 0) under its new
//! name, is written once (never over an existing file), and a wrong kind or name is a
//! usage error naming the kinds / the rule.

mod common;

use std::process::Command;

fn collc(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("collc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("collc-new-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

#[test]
fn every_kind_starts_verified() {
    let dir = scratch("kinds");
    for t in collc_spec::templates::TEMPLATES {
        let name = format!("my_{}", t.kind);
        let (code, out, err) = collc(&dir, &["new", t.kind, &name]);
        assert_eq!(code, 0, "{out}{err}");
        let file = format!("{name}.coll");
        let text = std::fs::read_to_string(dir.join(&file)).expect("written");
        assert!(text.contains(&format!("collective {name}:")), "{text}");
        assert!(text.starts_with(&format!("// {name}: a `{}` collective", t.kind)));
        assert!(text.contains("What to change:"));
        let (code, out, err) = collc(&dir, &["verify", &file]);
        assert_eq!(code, 0, "{}: {out}{err}", t.kind);
        // The same text on stdout with `-o -`.
        let (code, out, _) = collc(&dir, &["new", t.kind, &name, "-o", "-"]);
        assert_eq!(code, 0);
        assert_eq!(out.trim_end(), text.trim_end());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn never_overwrites_and_refuses_bad_input() {
    let dir = scratch("bad");
    std::fs::write(dir.join("b.coll"), "keep me").expect("write");
    let (code, _, err) = collc(&dir, &["new", "barrier", "b"]);
    assert_eq!(code, 2);
    assert!(err.contains("never overwrites"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("b.coll")).ok().as_deref(),
        Some("keep me")
    );
    let (code, _, err) = collc(&dir, &["new", "allscatter", "g"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("not a collective kind") && err.contains("allreduce"),
        "{err}"
    );
    for name in ["body", "9lives", "a-b", ""] {
        let (code, _, err) = collc(&dir, &["new", "barrier", name, "-o", "-"]);
        assert_eq!(code, 2, "{name}");
        assert!(err.contains("cannot name a collective"), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
