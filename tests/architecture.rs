//! The map in ARCHITECTURE.md, held to the source (read with `syn`):
//! - the layers: which top-level module may import which (`ALLOWED`), and no circle of
//!   imports between files;
//! - the store's index: every file under `src/store/` with an `impl Store` or
//!   `impl WriteTx` block is in the table "Where each store concern lives", and every
//!   file the table names has the blocks it says.
//!
//! An import is any `use` or path naming a module of this crate (`crate::…`, `super::…`,
//! a child module); test code (`#[cfg(test)]`, `*_tests.rs`) is left out. A folder's
//! `mod.rs` and the files under it are one unit for circles (a parent declares and
//! re-exports its children, a child implements its parent's types): circles between
//! files that are not each other's ancestors are refused.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};
use syn::{Attribute, Item, UseTree};

/// Which top-level modules each one may import; a module not listed may import none.
/// `auth` (the credentials, over the store) serves every edge: HTTP, and the gateways'
/// token check in `services::gateway_ingest` and the DirectIP listener. `server` is the
/// accept loop under HTTP and the listeners. The binary's own modules (`app`,
/// `settings`, `config`) wire the others together.
const ALLOWED: &[(&str, &[&str])] = &[
    ("domain", &[]),
    ("store", &["domain"]),
    ("channels", &["domain"]),
    ("auth", &["domain", "store"]),
    ("services", &["domain", "store", "channels", "auth"]),
    ("workers", &["services", "domain", "store", "channels"]),
    (
        "listeners",
        &["services", "domain", "store", "auth", "server"],
    ),
    ("http", &["services", "domain", "store", "auth", "server"]),
    ("server", &[]),
    ("config", &["domain", "listeners"]),
    (
        "app",
        &[
            "auth",
            "channels",
            "config",
            "domain",
            "http",
            "listeners",
            "server",
            "services",
            "store",
            "workers",
        ],
    ),
    (
        "settings",
        &[
            "app",
            "auth",
            "channels",
            "config",
            "domain",
            "http",
            "listeners",
            "server",
            "services",
            "workers",
        ],
    ),
];

/// Imports that break the rules above and are being removed (issue 44 §2): each names
/// the importing file and the imported one. None may be added.
const NOT_YET: &[(&str, &str)] = &[];

/// One source file of the library: where it is and which module it is.
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    syntax: syn::File,
}

fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

fn path_attribute(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Every non-test module file, from `src/lib.rs` down its `mod` declarations.
fn library_files() -> Vec<SourceFile> {
    let mut files = Vec::new();
    let mut pending = vec![(PathBuf::from("src/lib.rs"), Vec::<String>::new())];
    while let Some((path, module)) = pending.pop() {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let is_mod_file = matches!(
            path.file_name().and_then(|n| n.to_str()),
            Some("lib.rs" | "mod.rs")
        );
        let dir = if is_mod_file {
            path.parent().expect("a folder").to_path_buf()
        } else {
            path.with_extension("")
        };
        for item in &syntax.items {
            let Item::Mod(declared) = item else { continue };
            if declared.content.is_some() || is_test_only(&declared.attrs) {
                continue;
            }
            assert!(
                path_attribute(&declared.attrs).is_none(),
                "{path:?}: `#[path]` renames the module `{}`; name its file after it",
                declared.ident
            );
            let name = declared.ident.to_string();
            let flat = dir.join(format!("{name}.rs"));
            let child = if flat.exists() {
                flat
            } else {
                dir.join(&name).join("mod.rs")
            };
            let mut child_module = module.clone();
            child_module.push(name);
            pending.push((child, child_module));
        }
        files.push(SourceFile {
            path,
            module,
            syntax,
        });
    }
    files
}

/// The paths a file names, each as written (`crate::store::Store`, `super::Tx`, …).
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &[String], tree: &UseTree) {
        let mut path = prefix.to_vec();
        match tree {
            UseTree::Path(p) => {
                path.push(p.ident.to_string());
                self.use_tree(&path, &p.tree);
            }
            UseTree::Name(n) => {
                path.push(n.ident.to_string());
                self.found.push(path);
            }
            UseTree::Rename(r) => {
                path.push(r.ident.to_string());
                self.found.push(path);
            }
            UseTree::Glob(_) => self.found.push(path),
            UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast Item) {
        let attrs = match item {
            Item::Mod(m) => &m.attrs,
            Item::Fn(f) => &f.attrs,
            Item::Impl(i) => &i.attrs,
            Item::Use(u) => &u.attrs,
            Item::Const(c) => &c.attrs,
            Item::Struct(s) => &s.attrs,
            _ => return visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&[], &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.found.push(segments);
        visit::visit_path(self, path);
    }
}

/// The module a path written in `from` names (its longest prefix that is a module).
fn resolve(
    modules: &BTreeSet<Vec<String>>,
    from: &[String],
    path: &[String],
) -> Option<Vec<String>> {
    let mut base = from.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super" | "self") => {
            while let Some(step) = rest.first() {
                match step.as_str() {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = base.clone();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    let mut module = base;
    for segment in rest {
        module.push(segment.clone());
        if !modules.contains(&module) {
            module.pop();
            break;
        }
    }
    Some(module)
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() <= b.len() && b.starts_with(a)
}

/// The import graph between files: file → the files it imports.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = library_files();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let name_of: BTreeMap<&Vec<String>, String> = files
        .iter()
        .map(|f| (&f.module, f.path.display().to_string()))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let mut paths = Paths::default();
        paths.visit_file(&file.syntax);
        let imported: BTreeSet<String> = paths
            .found
            .iter()
            .filter_map(|p| resolve(&modules, &file.module, p))
            .filter(|m| !is_ancestor(m, &file.module) && !is_ancestor(&file.module, m))
            .map(|m| name_of[&m].clone())
            .collect();
        graph.insert(file.path.display().to_string(), imported);
    }
    graph
}

/// `src/http/error.rs` → `http`; `src/app/running.rs` → `app`.
fn top_module(file: &str) -> &str {
    let inside = file.strip_prefix("src/").unwrap_or(file);
    let first = inside.split('/').next().unwrap_or(inside);
    first.strip_suffix(".rs").unwrap_or(first)
}

#[test]
fn imports_run_down_the_layers() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = Vec::new();
    for (file, imports) in import_graph() {
        let from = top_module(&file);
        for imported in imports {
            let to = top_module(&imported);
            let permitted =
                from == to || to == "lib" || allowed.get(from).is_some_and(|may| may.contains(&to));
            if !permitted && !NOT_YET.contains(&(file.as_str(), imported.as_str())) {
                wrong.push(format!("{file} → {imported} ({from} may not import {to})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// Tarjan's strongly connected components of the import graph with more than one file.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn connect<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            connect(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let mut graph = import_graph();
    for (from, to) in NOT_YET {
        if let Some(imports) = graph.get_mut(*from) {
            imports.remove(*to);
        }
    }
    let found = circles(&graph);
    let described: Vec<String> = found.iter().map(|c| c.join(" ⇄ ")).collect();
    assert!(
        found.is_empty(),
        "circles of imports:\n{}",
        described.join("\n")
    );
}

/// Whether `item` is an inherent `impl Store` or `impl WriteTx` block, and which.
fn store_impl(item: &Item) -> Option<&'static str> {
    let Item::Impl(block) = item else { return None };
    if block.trait_.is_some() || is_test_only(&block.attrs) {
        return None;
    }
    let syn::Type::Path(ty) = &*block.self_ty else {
        return None;
    };
    match ty.path.segments.last()?.ident.to_string().as_str() {
        "Store" => Some("Store"),
        "WriteTx" => Some("WriteTx"),
        _ => None,
    }
}

/// File (under `src/store/`) → the types it has `impl` blocks of, from the source.
fn store_impls_in_source() -> BTreeMap<String, BTreeSet<String>> {
    let mut found = BTreeMap::new();
    for file in library_files() {
        let Ok(inside) = file.path.strip_prefix("src/store") else {
            continue;
        };
        let types: BTreeSet<String> = file
            .syntax
            .items
            .iter()
            .filter_map(store_impl)
            .map(str::to_string)
            .collect();
        if !types.is_empty() {
            found.insert(Path::new("store").join(inside).display().to_string(), types);
        }
    }
    found
}

/// The same, from ARCHITECTURE.md's table: `| `store/x.rs` | Store, WriteTx | … |`.
fn store_impls_in_the_map() -> BTreeMap<String, BTreeSet<String>> {
    let map = fs::read_to_string("ARCHITECTURE.md").expect("ARCHITECTURE.md");
    let section = map
        .split("## Where each store concern lives")
        .nth(1)
        .expect("ARCHITECTURE.md has the section \"Where each store concern lives\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut found = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with("| `store/")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let file = cells[1].trim_matches('`').to_string();
        let types = cells[2].split(',').map(|t| t.trim().to_string()).collect();
        assert!(
            found.insert(file.clone(), types).is_none(),
            "{file} is in the table twice"
        );
    }
    found
}

#[test]
fn the_store_table_names_every_file_with_store_methods() {
    let source = store_impls_in_source();
    let map = store_impls_in_the_map();
    let mut wrong = Vec::new();
    for (file, types) in &source {
        match map.get(file) {
            None => wrong.push(format!("{file} ({types:?}) is missing from the table")),
            Some(listed) if listed != types => wrong.push(format!(
                "{file}: the table says {listed:?}, the file has {types:?}"
            )),
            Some(_) => {}
        }
    }
    for file in map.keys().filter(|f| !source.contains_key(*f)) {
        wrong.push(format!(
            "{file} is in the table but has no impl Store or WriteTx"
        ));
    }
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md, \"Where each store concern lives\", is out of date:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_circle_of_three_files_is_found() {
    let edge = |from: &str, to: &[&str]| {
        let to = to.iter().map(|t| t.to_string()).collect();
        (from.to_string(), to)
    };
    let graph = BTreeMap::from([
        edge("a", &["b"]),
        edge("b", &["c"]),
        edge("c", &["a", "d"]),
        edge("d", &[]),
    ]);
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
}
