//! The documentation against the code: README.md starts with the main job and the test
//! command CI runs, has no line over 400 characters and one line per subcommand `collc
//! --help` lists; every relative link of README.md and docs/*.md resolves; the status table
//! of docs/verify.md ("What exit 0 means") names exactly the verifier's statuses, each with
//! the exit code `collc verify` gives it.

mod common;

use collc_verifier::Status;
use common::*;
use std::path::Path;
use std::process::Command;

fn readme() -> String {
    read(&repo_root().join("README.md"))
}

#[test]
fn readme_has_no_line_longer_than_400_characters() {
    let long: Vec<(usize, usize)> = readme()
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.chars().count()))
        .filter(|(_, n)| *n > 400)
        .collect();
    assert!(
        long.is_empty(),
        "README.md lines (number, length): {long:?}"
    );
}

#[test]
fn readme_starts_with_the_main_job_and_the_test_command_ci_runs() {
    let text = readme();
    let block: Vec<&str> = text
        .split("```")
        .nth(1)
        .expect("a code block")
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(block.len(), 2, "{block:?}");
    assert!(
        block[0].starts_with("cargo run --release -- verify examples/*.coll"),
        "{block:?}"
    );
    let test = block[1].split('#').next().unwrap_or("").trim();
    assert_eq!(test, "cargo test --workspace");
    let ci = read(&repo_root().join(".ci/run"));
    assert!(
        ci.lines().any(|l| l.trim() == test),
        ".ci/run does not run `{test}`"
    );
    let first_heading = text.lines().position(|l| l.starts_with("## "));
    let block_end = text.match_indices("```").nth(1).map(|(i, _)| i);
    let heading_at = first_heading.map(|n| text.lines().take(n).map(|l| l.len() + 1).sum());
    assert!(
        block_end < heading_at,
        "the commands come before any section"
    );
}

/// The subcommands `collc --help` lists.
fn subcommands() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("--help")
        .output()
        .expect("collc --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_has_one_line_per_subcommand_pointing_into_docs() {
    let text = readme();
    let commands = subcommands();
    assert!(commands.len() >= 10, "{commands:?}");
    for c in &commands {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(&format!("- `collc {c}")))
            .collect();
        assert_eq!(lines.len(), 1, "`collc {c}`: {lines:?}");
        assert!(lines[0].contains("](docs/"), "{}", lines[0]);
    }
}

/// The relative link targets of a markdown text (`[text](target)`), anchors removed.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let t = &rest[..end];
        if t.starts_with("http") || t.starts_with('#') || t.contains(' ') {
            continue;
        }
        out.push(t.split('#').next().unwrap_or(t).to_string());
    }
    out
}

#[test]
fn links_of_readme_and_docs_resolve() {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut broken = Vec::new();
    for f in &files {
        let dir = f.parent().unwrap_or(Path::new("."));
        for l in links(&read(f)) {
            if !dir.join(&l).exists() {
                broken.push(format!("{}: {l}", rel(f)));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

/// Every status, by an exhaustive match: a new status fails to compile here until the
/// table of docs/verify.md and this list name it.
fn all_statuses() -> Vec<Status> {
    let all = [
        Status::Proved,
        Status::Checked,
        Status::Warning,
        Status::Violated,
        Status::Unknown,
        Status::Skipped,
    ];
    for s in all {
        match s {
            Status::Proved
            | Status::Checked
            | Status::Warning
            | Status::Violated
            | Status::Unknown
            | Status::Skipped => {}
        }
    }
    all.to_vec()
}

/// The rows of the status table under "## What exit 0 means": (status, exit code).
fn documented_statuses() -> Vec<(String, i32)> {
    let doc = read(&repo_root().join("docs/verify.md"));
    let section = doc
        .split("\n## What exit 0 means\n")
        .nth(1)
        .expect("docs/verify.md has the section")
        .split("\n## ")
        .next()
        .unwrap_or("");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let code = cells[2].parse().expect("an exit code");
            (cells[1].trim_matches('`').to_string(), code)
        })
        .collect()
}

#[test]
fn verify_md_states_every_status_and_the_exit_code_it_gives() {
    let documented = documented_statuses();
    let mut names: Vec<String> = documented.iter().map(|(s, _)| s.clone()).collect();
    let mut real: Vec<String> = all_statuses()
        .into_iter()
        .map(|s| collc::render::verify::status_str(s).to_string())
        .collect();
    names.sort();
    real.sort();
    assert_eq!(names, real, "docs/verify.md's status table");
    // A report whose obligations are all proved but one, with that status.
    let text = read(&repo_root().join("examples/barrier.coll"));
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("valid");
    let base = collc_verifier::verify(&p, &collc_verifier::Options::symbolic_only());
    for s in all_statuses() {
        let mut r = base.clone();
        for o in &mut r.obligations {
            o.status = Status::Proved;
        }
        r.obligations[0].status = s;
        let name = collc::render::verify::status_str(s);
        let doc = documented.iter().find(|(n, _)| n == name).map(|x| x.1);
        assert_eq!(doc, Some(r.exit_code()), "`{name}`");
    }
}
