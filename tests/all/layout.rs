//! The server's layout holds: no two files of `src/server` import each
//! other, directly or round a circle. Each file is read as text: its `use`
//! declarations (groups expanded, `super::` resolved) and the paths in its
//! code (`crate::server::…`, and names it imported as modules), each
//! resolved to the deepest file it names. Test modules are left out (they
//! see their parent by design).
//!
//! It reads imports, not types, so an import it cannot resolve is skipped;
//! what it finds is a real import.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src/server`: `accounts/budget.rs` is
/// `["accounts", "budget"]`.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect()
}

/// The code of a file without comments and without its test modules.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("");
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else { return vec![tree.split(" as ").next().unwrap_or("").trim().to_string()] };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for ch in inner.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    parts.push(cur);
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(p))
        .map(|p| if p == "self" { prefix.trim_end_matches("::").to_string() } else { format!("{prefix}{p}") })
        .collect()
}

/// A path as segments under `server`, from the file whose module is `here`;
/// `None` when it points outside the server.
fn absolute(path: &str, here: &[String]) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
    match segs.first()? {
        &"crate" if segs.get(1) == Some(&"server") => Some(segs[2..].iter().map(|s| s.to_string()).collect()),
        &"super" => {
            let mut base: Vec<String> = here[..here.len().saturating_sub(1)].to_vec();
            let mut rest = &segs[1..];
            while rest.first() == Some(&"super") {
                base.pop();
                rest = &rest[1..];
            }
            base.extend(rest.iter().map(|s| s.to_string()));
            Some(base)
        }
        &"self" => Some(here.iter().cloned().chain(segs[1..].iter().map(|s| s.to_string())).collect()),
        _ => None,
    }
}

/// The deepest module file a path names.
fn resolve<'a>(path: &[String], modules: &'a BTreeMap<Vec<String>, String>) -> Option<&'a String> {
    (1..=path.len()).rev().find_map(|n| modules.get(&path[..n]))
}

/// `ident(::ident)*` starting at `at` in `s`.
fn path_at(s: &str, at: usize) -> &str {
    let end = s[at..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(s.len(), |e| at + e);
    s[at..end].trim_end_matches(':')
}

fn imports(text: &str, here: &[String], modules: &BTreeMap<Vec<String>, String>) -> BTreeSet<String> {
    let code = code(text);
    let mut found = BTreeSet::new();
    // Names brought in as modules, to follow their use in the code.
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use ") {
        let is_word_start = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let Some(end) = rest[at..].find(';') else { break };
        if is_word_start {
            for path in expand(&rest[at + 4..at + end]) {
                let Some(abs) = absolute(&path, here) else { continue };
                if let Some(file) = resolve(&abs, modules) {
                    found.insert(file.clone());
                }
                if let (Some(last), true) = (abs.last(), modules.contains_key(&abs)) {
                    aliases.insert(last.clone(), abs.clone());
                }
            }
        }
        rest = &rest[at + end..];
    }
    for (i, _) in code.match_indices("crate::server::") {
        if let Some(file) = absolute(path_at(&code, i), here).and_then(|abs| resolve(&abs, modules).cloned()) {
            found.insert(file);
        }
    }
    for (i, _) in code.match_indices("super::") {
        if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(file) = absolute(path_at(&code, i), here).and_then(|abs| resolve(&abs, modules).cloned()) {
            found.insert(file);
        }
    }
    for (name, module) in &aliases {
        for (i, _) in code.match_indices(&format!("{name}::")) {
            if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let tail: Vec<String> = path_at(&code, i).split("::").skip(1).map(str::to_string).collect();
            let abs: Vec<String> = module.iter().cloned().chain(tail).collect();
            if let Some(file) = resolve(&abs, modules) {
                found.insert(file.clone());
            }
        }
    }
    found
}

/// A circle in `graph`, if there is one, as the files round it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(n: &str, graph: &BTreeMap<String, BTreeSet<String>>, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|s| s == m).unwrap();
                    return Some(stack[from..].to_vec());
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn server_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server");
    let mut all = Vec::new();
    files(&root, &mut all);
    let modules: BTreeMap<Vec<String>, String> =
        all.iter().map(|f| (module_of(&root, f), f.strip_prefix(&root).unwrap().display().to_string())).collect();
    let mut graph = BTreeMap::new();
    for f in &all {
        let here = module_of(&root, f);
        let name = modules[&here].clone();
        let mut to = imports(&std::fs::read_to_string(f).unwrap(), &here, &modules);
        to.remove(&name);
        graph.insert(name, to);
    }
    graph
}

#[test]
fn no_file_of_the_server_imports_round_a_circle() {
    let graph = server_graph();
    assert!(graph.len() > 60, "read the server's files: {}", graph.len());
    // The reader sees what it must: the state is read by the router, and
    // the state reads the configuration.
    assert!(graph["http/router.rs"].contains("state.rs"), "{:?}", graph["http/router.rs"]);
    assert!(graph["state.rs"].contains("config.rs"), "{:?}", graph["state.rs"]);
    assert!(graph["accounts/schools.rs"].contains("ids.rs"), "{:?}", graph["accounts/schools.rs"]);
    if let Some(c) = circle(&graph) {
        panic!("these files of src/server import each other round a circle: {}", c.join(" → "));
    }
}

#[test]
fn a_circle_is_found_when_there_is_one() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("a.rs".into(), ["b.rs".to_string()].into());
    graph.insert("b.rs".into(), ["c.rs".to_string()].into());
    graph.insert("c.rs".into(), BTreeSet::new());
    assert_eq!(circle(&graph), None);
    graph.get_mut("c.rs").unwrap().insert("a.rs".into());
    assert_eq!(circle(&graph), Some(vec!["a.rs".into(), "b.rs".into(), "c.rs".into()]));
}

#[test]
fn groups_and_super_paths_are_read_as_the_compiler_reads_them() {
    assert_eq!(expand("crate::server::{db::{self, Db}, ids}"), ["crate::server::db", "crate::server::db::Db", "crate::server::ids"]);
    let here = vec!["chats".to_string(), "turns".to_string(), "run".to_string()];
    assert_eq!(absolute("super::store::Lease", &here), Some(vec!["chats".into(), "turns".into(), "store".into(), "Lease".into()]));
    assert_eq!(absolute("crate::agent::run", &here), None);
}
