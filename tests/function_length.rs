//! No function outside tests runs over `MAX_LINES` lines (from `fn` to its closing
//! brace): a longer one does several jobs, and each deserves a name.

use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};
use syn::{Attribute, Block, ImplItemFn, ItemFn, ItemMod, Signature, TraitItemFn};

const MAX_LINES: usize = 80;

/// Files wholly allowed while being reworked (none now).
const FILES_NOT_YET: &[&str] = &[];

/// A function over the limit: where, its name, its length.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LongFunction {
    file: String,
    name: String,
    lines: usize,
}

struct Finder<'a> {
    file: &'a str,
    found: Vec<LongFunction>,
}

fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        if path.is_ident("test") || path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        path.is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

impl Finder<'_> {
    fn measure(&mut self, attrs: &[Attribute], sig: &Signature, block: &Block) {
        if is_test_only(attrs) {
            return;
        }
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        let lines = last + 1 - first;
        if lines > MAX_LINES {
            self.found.push(LongFunction {
                file: self.file.to_string(),
                name: sig.ident.to_string(),
                lines,
            });
        }
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_mod(&mut self, module: &'ast ItemMod) {
        if !is_test_only(&module.attrs) {
            visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_fn(&mut self, function: &'ast ItemFn) {
        self.measure(&function.attrs, &function.sig, &function.block);
        visit::visit_item_fn(self, function);
    }

    fn visit_impl_item_fn(&mut self, function: &'ast ImplItemFn) {
        self.measure(&function.attrs, &function.sig, &function.block);
        visit::visit_impl_item_fn(self, function);
    }

    fn visit_trait_item_fn(&mut self, function: &'ast TraitItemFn) {
        if let Some(block) = &function.default {
            self.measure(&function.attrs, &function.sig, block);
        }
        visit::visit_trait_item_fn(self, function);
    }
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// Every function over the limit in `src/`, outside tests (`#[cfg(test)]` modules,
/// `#[test]` functions and the `*_tests.rs` files they include).
fn long_functions() -> Vec<LongFunction> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut found = Vec::new();
    for path in files {
        let file = path
            .strip_prefix(root)
            .expect("under the crate")
            .to_string_lossy()
            .replace('\\', "/");
        if file.ends_with("_tests.rs") || file.ends_with("/tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut finder = Finder {
            file: &file,
            found: Vec::new(),
        };
        finder.visit_file(&syntax);
        found.extend(finder.found);
    }
    found.sort();
    found
}

#[test]
fn no_function_outside_tests_is_over_the_limit() {
    let found = long_functions();
    let over: Vec<String> = found
        .iter()
        .filter(|f| {
            !FILES_NOT_YET
                .iter()
                .any(|allowed| f.file.starts_with(allowed))
        })
        .map(|f| format!("{}: {} ({} lines)", f.file, f.name, f.lines))
        .collect();
    assert!(
        over.is_empty(),
        "over {MAX_LINES} lines; split each by job, with names saying what each part does:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_finder_measures_from_fn_to_the_closing_brace() {
    let body = "    let x = 1;\n".repeat(MAX_LINES);
    let text = format!(
        "fn long() {{\n{body}}}\nfn short() {{}}\n#[cfg(test)]\nmod tests {{ fn long_test() {{\n{body}}} }}"
    );
    let syntax = syn::parse_file(&text).expect("parses");
    let mut finder = Finder {
        file: "example.rs",
        found: Vec::new(),
    };
    finder.visit_file(&syntax);
    assert_eq!(
        finder.found,
        [LongFunction {
            file: "example.rs".into(),
            name: "long".into(),
            lines: MAX_LINES + 2,
        }]
    );
}
