//! Development aid: `cargo run -p collc-verifier --example vdbg -- FILE [--explain|--param|--cost k=v ...]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("read");
    let c = collc_spec::front(&collc_verifier::Ranges, &text);
    let Some(p) = c.protocol else {
        eprintln!("{:#?}", c.diagnostics);
        return;
    };
    if args.get(2).map(String::as_str) == Some("--explain") {
        match collc_verifier::table::explain(&p) {
            Ok(t) => print!("{}", t.render()),
            Err(e) => println!("error: {e}"),
        }
        return;
    }
    if args.get(2).map(String::as_str) == Some("--param") {
        let o = collc_verifier::param::prove(&p, std::time::Duration::from_secs(60));
        for id in collc_verifier::param::IDS {
            println!("{id:16} {:?}", o.results.get(id));
        }
        return;
    }
    if args.get(2).map(String::as_str) == Some("--cost") {
        let mut m = std::collections::BTreeMap::new();
        for a in &args[3..] {
            let (k, v) = a.split_once('=').expect("k=v");
            m.insert(k.to_string(), v.parse::<i64>().expect("int"));
        }
        println!("{:#?}", collc_verifier::cost::cost(&p, &m));
        return;
    }
    let r = collc_verifier::verify(&p, &Default::default());
    if args.get(2).map(String::as_str) == Some("--lines") {
        let src = collc_grammar::Source::new(&args[1], text.clone());
        for d in r.diagnostics() {
            let lines: Vec<usize> = d
                .labels
                .iter()
                .map(|l| src.line_col(l.span.start).0)
                .collect();
            println!("{:?} {} {:?} {}", d.severity, d.code, lines, d.message);
        }
        return;
    }
    for o in &r.obligations {
        println!("{:16} {:?} {} {:?}", o.id, o.status, o.summary(), o.reason);
        for f in &o.findings {
            println!(
                "   {} params={:?} cell={:?} value={:?} formula={:?}",
                f.message,
                f.params
                    .iter()
                    .map(|x| format!("{}={}", x.name, x.value))
                    .collect::<Vec<_>>(),
                f.cell,
                f.value,
                f.formula
            );
            for c in &f.contributions {
                println!("      {:?}", c);
            }
        }
    }
    println!("{} | {:?}", r.method, r.stats);
}
