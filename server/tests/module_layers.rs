//! No import cycles inside a crate: each crate's modules form layers. Reads every source file
//! of the workspace's crates, follows every `crate::`, `super::` and `self::` path (in `use`
//! trees, nested braces included, and in code), and paths through a child module named from its
//! parent; fails on any cycle between modules, naming the uses that close it.
//!
//! An edge goes to the module that *defines* what a path names: a parent's re-exports
//! (`pub use child::Item`) are followed to the child, and are no edge of the parent's own, nor
//! is its `mod child;`. Inline modules (`mod tests { … }`) belong to the module of their file.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module's path from the crate root (`[]` is the root).
type ModPath = Vec<String>;

struct Module {
    file: PathBuf,
    /// Names of items the module defines (not counting `use`).
    defines: BTreeSet<String>,
    /// Re-exports: name → the path it re-exports, relative to the module's position.
    reexports: Vec<(String, Vec<String>, ModPath)>,
    /// Glob re-exports: the path of the module whose items come through, with its context.
    glob_reexports: Vec<(Vec<String>, ModPath)>,
    /// Every path the module uses: (path segments, the module path it is written in).
    uses: Vec<(Vec<String>, ModPath)>,
}

/// The modules of the crate rooted at `src/lib.rs`, by path.
fn load_crate(src: &Path) -> BTreeMap<ModPath, Module> {
    let mut modules = BTreeMap::new();
    let mut files = Vec::new();
    collect_files(src, &mut files);
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let mut path: ModPath = relative.with_extension("").iter().map(|s| s.to_string_lossy().into_owned()).collect();
        match path.last().map(String::as_str) {
            Some("lib") if path.len() == 1 => path.clear(),
            Some("main") if path.len() == 1 => continue, // the binary: a crate of its own
            Some("mod") => {
                path.pop();
            }
            _ => {}
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut module = Module { file: file.clone(), defines: BTreeSet::new(), reexports: Vec::new(), glob_reexports: Vec::new(), uses: Vec::new() };
        scan_items(&ast.items, &path, &mut module, true);
        modules.insert(path, module);
    }
    modules
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Records a file's (or an inline module's) items: definitions and re-exports count for the
/// file's module only at its top level; uses count everywhere.
fn scan_items(items: &[syn::Item], context: &ModPath, module: &mut Module, top: bool) {
    for item in items {
        let ident = match item {
            syn::Item::Const(i) => Some(&i.ident),
            syn::Item::Enum(i) => Some(&i.ident),
            syn::Item::Fn(i) => Some(&i.sig.ident),
            syn::Item::Macro(i) => i.ident.as_ref(),
            syn::Item::Static(i) => Some(&i.ident),
            syn::Item::Struct(i) => Some(&i.ident),
            syn::Item::Trait(i) => Some(&i.ident),
            syn::Item::Type(i) => Some(&i.ident),
            syn::Item::Union(i) => Some(&i.ident),
            syn::Item::Mod(i) => Some(&i.ident),
            _ => None,
        };
        if let (true, Some(ident)) = (top, ident) {
            module.defines.insert(ident.to_string());
        }
        match item {
            syn::Item::Use(u) => {
                let mut leaves = Vec::new();
                use_leaves(&u.tree, Vec::new(), &mut leaves);
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                for (path, name) in leaves {
                    match (top && public, name) {
                        // A re-export: followed, not an edge of this module's own.
                        (true, Some(name)) => module.reexports.push((name, path, context.clone())),
                        (true, None) => module.glob_reexports.push((path, context.clone())),
                        (false, _) => module.uses.push((path, context.clone())),
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let mut inner_context = context.clone();
                    inner_context.push(m.ident.to_string());
                    scan_items(inner, &inner_context, module, false);
                }
            }
            other => {
                let mut paths = PathCollector { context, module };
                paths.visit_item(other);
            }
        }
    }
}

/// The leaves of a use tree: each path (with `self` leaves folded into their parent) and the
/// name it binds (`None` for a glob).
fn use_leaves(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut prefix = prefix;
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            let name = prefix.last().cloned();
            out.push((prefix, name));
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix;
            path.push(n.ident.to_string());
            out.push((path, Some(n.ident.to_string())));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix;
            path.push(r.ident.to_string());
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix, None)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, prefix.clone(), out);
            }
        }
    }
}

/// Collects the paths in code (types, expressions, patterns, nested `use`s in function bodies).
struct PathCollector<'a> {
    context: &'a ModPath,
    module: &'a mut Module,
}

impl<'ast> Visit<'ast> for PathCollector<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.module.uses.push((segments, self.context.clone()));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&u.tree, Vec::new(), &mut leaves);
        for (path, _) in leaves {
            self.module.uses.push((path, self.context.clone()));
        }
    }

    /// `pub(super)` names who may see an item, not what it uses.
    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {}

    /// Macro bodies are tokens to syn: their paths (`tokio::select!`'s branches, `format!`'s
    /// arguments) are read from the tokens.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let mut paths = Vec::new();
        token_paths(mac.tokens.clone(), &mut paths);
        for path in paths {
            self.module.uses.push((path, self.context.clone()));
        }
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let mut inner = self.context.clone();
        inner.push(m.ident.to_string());
        if let Some((_, items)) = &m.content {
            for item in items {
                PathCollector { context: &inner, module: self.module }.visit_item(item);
            }
        }
    }
}

/// The paths of two or more segments in a token stream (`a::b::c`), groups included.
fn token_paths(tokens: proc_macro2::TokenStream, out: &mut Vec<Vec<String>>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let colons = |i: usize| matches!((tokens.get(i), tokens.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':');
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => token_paths(g.stream(), out),
            TokenTree::Ident(first) if !(i >= 2 && colons(i - 2)) => {
                let mut path = vec![first.to_string()];
                while colons(i + 1) {
                    let Some(TokenTree::Ident(next)) = tokens.get(i + 3) else { break };
                    path.push(next.to_string());
                    i += 3;
                }
                if path.len() > 1 {
                    out.push(path);
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The crate's view: which module a path, written in `context`, names.
struct Resolver<'a> {
    modules: &'a BTreeMap<ModPath, Module>,
}

impl Resolver<'_> {
    /// The file module an (inline) module path belongs to.
    fn file_module(&self, path: &ModPath) -> ModPath {
        let mut p = path.clone();
        while !self.modules.contains_key(&p) {
            p.pop();
        }
        p
    }

    /// The module a path written in `context` points into, if it is a path inside the crate.
    fn resolve(&self, segments: &[String], context: &ModPath, depth: usize) -> Option<ModPath> {
        if depth > 16 || segments.is_empty() {
            return None;
        }
        let (mut base, rest) = match segments[0].as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "self" => (context.clone(), &segments[1..]),
            "super" => {
                let mut base = context.clone();
                let mut rest = segments;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                (base, rest)
            }
            // A bare path is the crate's own only through a child module of the context.
            first => {
                let mut child = self.file_module(context);
                child.push(first.to_string());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                (context.clone(), segments)
            }
        };
        base = self.file_module(&base);
        for (i, segment) in rest.iter().enumerate() {
            let mut child = base.clone();
            child.push(segment.clone());
            if self.modules.contains_key(&child) {
                base = child;
                continue;
            }
            // `segment` is an item of `base`: defined there, or re-exported from elsewhere.
            let module = &self.modules[&base];
            if module.defines.contains(segment) {
                return Some(base);
            }
            if let Some((_, path, ctx)) = module.reexports.iter().find(|(name, _, _)| name == segment) {
                let mut full = path.clone();
                full.extend(rest[i + 1..].iter().cloned());
                return self.resolve(&full, ctx, depth + 1).or(Some(base));
            }
            for (glob, ctx) in &module.glob_reexports {
                let mut full = glob.clone();
                full.extend(rest[i..].iter().cloned());
                if let Some(found) = self.resolve(&full, ctx, depth + 1) {
                    return Some(found);
                }
            }
            return Some(base);
        }
        Some(base)
    }
}

/// Where an edge comes from: the file and one path in it that makes the edge.
type Witness = (PathBuf, String);

/// The module graph of one crate: edges with one use that makes each.
fn edges(modules: &BTreeMap<ModPath, Module>) -> BTreeMap<(ModPath, ModPath), Witness> {
    let resolver = Resolver { modules };
    let mut edges = BTreeMap::new();
    for (from, module) in modules {
        for (path, context) in &module.uses {
            if let Some(to) = resolver.resolve(path, context, 0) {
                if &to != from {
                    edges.entry((from.clone(), to)).or_insert((module.file.clone(), path.join("::")));
                }
            }
        }
    }
    edges
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(nodes: &[ModPath], edges: &BTreeMap<(ModPath, ModPath), Witness>) -> Vec<Vec<ModPath>> {
    struct Tarjan<'a> {
        next: &'a HashMap<&'a ModPath, Vec<&'a ModPath>>,
        index: HashMap<&'a ModPath, usize>,
        low: HashMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a ModPath) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for &w in self.next.get(v).map(Vec::as_slice).unwrap_or(&[]) {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut next: HashMap<&ModPath, Vec<&ModPath>> = HashMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let mut t = Tarjan { next: &next, index: HashMap::new(), low: HashMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), found: Vec::new() };
    for v in nodes {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.found
}

fn name(path: &ModPath) -> String {
    if path.is_empty() {
        "crate".into()
    } else {
        path.join("::")
    }
}

/// The cycles of the crate whose sources are in `src`, described with the uses that make them.
fn crate_cycles(src: &Path) -> Vec<String> {
    let modules = load_crate(src);
    let edges = edges(&modules);
    let nodes: Vec<ModPath> = modules.keys().cloned().collect();
    cycles(&nodes, &edges)
        .into_iter()
        .map(|component| {
            let members: BTreeSet<&ModPath> = component.iter().collect();
            let inside: Vec<String> = edges
                .iter()
                .filter(|((from, to), _)| members.contains(from) && members.contains(to))
                .map(|((from, to), (file, path))| format!("    {} → {}  ({}: {path})", name(from), name(to), file.display()))
                .collect();
            format!("cycle among {}:\n{}", component.iter().map(name).collect::<Vec<_>>().join(", "), inside.join("\n"))
        })
        .collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut found = Vec::new();
    for krate in ["circuits", "wasm-core", "server"] {
        for cycle in crate_cycles(&workspace().join(krate).join("src")) {
            found.push(format!("{krate}: {cycle}"));
        }
    }
    assert!(found.is_empty(), "modules import each other:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_cycles_through_nested_uses_code_paths_and_re_exports() {
    // A crate in a temporary directory: `a` names `b` in a nested use tree, `b` names `c` in
    // code inside a macro, and `c` reaches `a` through the root's re-export — a cycle; the
    // root's own re-exports are no edges of its own.
    let dir = std::env::temp_dir().join(format!("garblet-module-layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\npub use a::Alpha;\npub use b::*;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::{inner::{Beta}}, c};\npub struct Alpha;\n").unwrap();
    std::fs::write(src.join("b/mod.rs"), "pub mod inner;\n").unwrap();
    std::fs::write(src.join("b/inner.rs"), "pub struct Beta;\nfn f() { let _ = format!(\"{:?}\", super::super::c::gamma()); }\n").unwrap();
    std::fs::write(src.join("c.rs"), "pub fn gamma() -> crate::Alpha { crate::Alpha }\n").unwrap();
    let cycles = crate_cycles(&src);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    for member in ["a", "b::inner", "c"] {
        assert!(cycles[0].contains(member), "{cycles:?}");
    }
    assert!(!cycles[0].contains("crate,") && !cycles[0].contains("among crate"), "the root's re-exports are no edges: {cycles:?}");
    // Without the use that closes it, no cycle.
    std::fs::write(src.join("c.rs"), "pub fn gamma() {}\n").unwrap();
    assert!(crate_cycles(&src).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
