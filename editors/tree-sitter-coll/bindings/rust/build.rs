//! Compiles the generated parser (src/parser.c) with the C compiler.

fn main() {
    let src = std::path::Path::new("src");
    let mut c = cc::Build::new();
    c.std("c11").include(src).warnings(false);
    c.file(src.join("parser.c"));
    println!("cargo:rerun-if-changed=src/parser.c");
    c.compile("tree-sitter-coll");
}
