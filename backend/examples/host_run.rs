//! `cargo run -p collc-backend --example host_run -- FILE [NAME=V ...] [--emit] [--tsan]`:
//! print the generated kernel, or run it on CPU threads and check it (development aid; the
//! user-facing commands are `collc emit` and `collc run`).

use collc_backend::cpp::{emit, EmitOptions, Target};
use collc_backend::host::{run_with_source, Build, Exec, RunConfig};
use collc_grammar::Source;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: host_run FILE [NAME=V ...] [--emit] [--tsan] [--barrier]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(file).expect("readable file");
    let src = Source::new(file.clone(), text.clone());
    let checked = collc_spec::front(&collc_verifier::Ranges, &text);
    let Some(p) = checked.protocol else {
        eprintln!("{:#?}", checked.diagnostics);
        std::process::exit(1);
    };
    if args.iter().any(|a| a == "--emit") {
        match emit(
            &p,
            Target::Ascend,
            &EmitOptions {
                source: Some(&src),
                warning: vec![],
                world_limit: None,
            },
        ) {
            Ok(t) => print!("{t}"),
            Err(d) => {
                eprintln!("{d:#?}");
                std::process::exit(1);
            }
        }
        return;
    }
    let mut cfg = RunConfig::default();
    for a in &args[1..] {
        if let Some((k, v)) = a.split_once('=') {
            cfg.params
                .insert(k.to_string(), v.parse().expect("integer"));
        }
    }
    if args.iter().any(|a| a == "--tsan") {
        cfg.build = Build::Tsan;
        cfg.exec = Exec::Subprocess;
    }
    if args.iter().any(|a| a == "--sub") {
        cfg.exec = Exec::Subprocess;
    }
    cfg.host_barrier = args.iter().any(|a| a == "--barrier");
    match run_with_source(&p, Some(&src), &cfg) {
        Ok(r) => {
            println!("{}", r.summary());
            std::process::exit(if r.ok() { 0 } else { 1 });
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
