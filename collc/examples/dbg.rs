fn main() {
    for f in std::env::args().skip(1) {
        let t = std::fs::read_to_string(&f).unwrap();
        let c = collc_spec::check(&t);
        for d in &c.diagnostics {
            println!("{f}: {} {} {:?}", d.code, d.message, d.labels);
        }
        if let Some(p) = c.protocol {
            println!("{}", collc_spec::print::format_with_source(&p, &t));
        }
    }
}
