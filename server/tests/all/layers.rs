//! The import direction of the server's crates, read from their sources as a
//! reviewer reads them: the `crate::x` imports of each top-level module
//! outside its tests. No two modules may reach each other, and Kubernetes'
//! built-in behaviour (the admission plugins, the kinds' hooks, the authorizers,
//! the controllers) stays above the generic layers, which name no kind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of the crate whose sources are in `src`, each with
/// the top-level modules it imports.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if (path.is_dir() || path.extension().is_some_and(|e| e == "rs"))
            && name != "lib"
            && name != "main"
        {
            modules.insert(name, BTreeSet::new());
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        let Some(imported) = modules.get_mut(&module) else {
            continue;
        };
        if relative.ends_with("tests.rs") || relative.components().any(|c| c.as_os_str() == "tests")
        {
            continue;
        }
        let text = without_comments(&without_tests(&std::fs::read_to_string(&file).unwrap()));
        for name in crate_paths(&text) {
            if name != module && names.contains(&name) {
                imported.insert(name);
            }
        }
    }
    modules
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// The text without `#[cfg(test)] mod ... { ... }` blocks.
fn without_tests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let is_module = after["#[cfg(test)]".len()..]
            .trim_start()
            .trim_start_matches("pub ")
            .starts_with("mod ");
        let Some(open) = after.find('{').filter(|_| is_module) else {
            out.push_str("#[cfg(test)]");
            rest = &after["#[cfg(test)]".len()..];
            continue;
        };
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The text without `//` comments (doc comments name modules in prose).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of every `crate::a` and `crate::{a, b::c}` path.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in text.match_indices("crate::") {
        let after = &text[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for part in inner.split(',') {
                found.insert(ident(part.trim()));
            }
        } else {
            found.insert(ident(after));
        }
    }
    found
}

/// Groups of modules that import each other, directly or not (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    group.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn no_module_circles_in_the_server_and_runtime_crates() {
    for crate_src in [
        "server/src",
        "server/storage/src",
        "server/structured-merge/src",
        "runtime/src",
    ] {
        let graph = imports(&workspace().join(crate_src));
        assert!(graph.len() > 2, "{crate_src}: no modules found");
        assert_eq!(
            circles(&graph),
            Vec::<Vec<String>>::new(),
            "{crate_src}: modules in a circle"
        );
    }
}

#[test]
fn the_reader_sees_a_circle_where_there_is_one() {
    let text = "use crate::{a, b::c};\n// crate::d\n#[cfg(test)]\nmod tests { use crate::e; }\nfn f() { crate::g::h(); }";
    let found = crate_paths(&without_comments(&without_tests(text)));
    assert_eq!(found, ["a", "b", "g"].map(str::to_owned).into());
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("x", vec!["y"]),
        ("y", vec!["z"]),
        ("z", vec!["x"]),
        ("w", vec!["x"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(circles(&graph), vec![vec!["x", "y", "z"]]);
}

#[test]
fn kubernetes_built_in_behaviour_sits_above_the_generic_layers() {
    let builtin = [
        "admission_plugins",
        "kinds",
        "authorizers",
        "builtin_controllers",
    ];
    // Only the server's start-up assembles them; among themselves they may
    // use each other (the kinds' hooks use the plugins' node checks and
    // RBAC's policy, NodeRestriction the Node authorizer's relations).
    let assemblers = [
        "serve",
        "kinds",
        "admission_plugins",
        "authorizers",
        "builtin_controllers",
    ];
    let src = workspace().join("server/src");
    for (module, imported) in imports(&src) {
        if assemblers.contains(&module.as_str()) {
            continue;
        }
        for name in builtin {
            assert!(
                !imported.contains(name),
                "the generic module {module} imports {name}"
            );
        }
    }
    // The generic layers name no kind: the typed kinds are for the built-in
    // behaviour alone.
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if builtin.contains(&first.trim_end_matches(".rs")) || relative.ends_with("tests.rs") {
            continue;
        }
        let text = without_comments(&without_tests(&std::fs::read_to_string(&file).unwrap()));
        assert!(
            !text.contains("kapi_api_types"),
            "{} names the typed kinds",
            relative.display()
        );
    }
}
