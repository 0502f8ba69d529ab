//! Compiles the generated parser and the external scanner.

fn main() {
    let src = std::path::Path::new("src");
    let mut build = cc::Build::new();
    build.std("c11").include(src).warnings(false);
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("msvc") {
        build.flag("-utf-8");
    }
    for file in ["parser.c", "scanner.c"] {
        let path = src.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        build.file(path);
    }
    for header in ["keywords.h", "tree_sitter/parser.h", "tree_sitter/alloc.h", "tree_sitter/array.h"] {
        println!("cargo:rerun-if-changed={}", src.join(header).display());
    }
    build.compile("tree-sitter-saffron");
}
