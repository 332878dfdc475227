//! The server's layout holds: no two files of `src/server` import each
//! other, directly or round a circle; and its domains stand on floors, each
//! importing only from those below it (`FLOORS`), but for the imports still
//! listed as running back up, a list that only shrinks.
//!
//! Each file is read as text: its `use` declarations (groups expanded,
//! `super::` resolved) and the paths in its code (`crate::server::…`, the
//! children it declares with `mod`, and names it imported as modules), each
//! resolved to the deepest file it names, and through a re-export
//! (`pub use hub::TurnLog`) to the file that defines the name. A parent's
//! re-export of its own children is its face, not an import. Test modules
//! are left out (they see their parent by design).
//!
//! It reads imports, not types, so an import it cannot resolve is skipped;
//! what it finds is a real import. One cohesive thing, the reader with the
//! rules it checks and its own tests, which is why it runs past 400 lines.

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
    expand_named(tree).into_iter().map(|(path, _)| path).collect()
}

/// `expand`, with the name each path is known by (`a::b as c` is `c`).
fn expand_named(tree: &str) -> Vec<(String, String)> {
    let tree = tree.trim();
    if !tree.contains('{') {
        let mut halves = tree.split(" as ");
        let path = halves.next().unwrap_or("").trim().to_string();
        let name = halves.next().map(|n| n.trim().to_string()).unwrap_or_else(|| path.rsplit("::").next().unwrap_or("").trim().to_string());
        return vec![(path, name)];
    }
    let open = tree.find('{').unwrap_or(0);
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
        .flat_map(|p| expand_named(p))
        .map(|(p, name)| {
            if p == "self" {
                let path = prefix.trim_end_matches("::").to_string();
                let name = if name == "self" { path.rsplit("::").next().unwrap_or("").trim().to_string() } else { name };
                (path, name)
            } else {
                (format!("{prefix}{p}"), name)
            }
        })
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

/// The server's files by module path, and what each module re-exports
/// (`chats::turns::TurnLog` → `chats::turns::hub::TurnLog`).
struct Tree {
    modules: BTreeMap<Vec<String>, String>,
    reexports: BTreeMap<Vec<String>, Vec<String>>,
}

/// The file a path names: the deepest module file, or, where the name after
/// it is a re-export, the file the re-export leads to.
fn resolve(path: &[String], tree: &Tree) -> Option<String> {
    fn within(path: &[String], tree: &Tree, depth: usize) -> Option<String> {
        let n = (1..=path.len()).rev().find(|n| tree.modules.contains_key(&path[..*n]))?;
        if depth < 8 && n < path.len() {
            if let Some(target) = tree.reexports.get(&path[..=n]) {
                let full: Vec<String> = target.iter().chain(&path[n + 1..]).cloned().collect();
                if let Some(file) = within(&full, tree, depth + 1) {
                    return Some(file);
                }
            }
        }
        Some(tree.modules[&path[..n]].clone())
    }
    within(path, tree, 0)
}

/// The `use` declarations of `code`: whether each is a re-export (`pub`),
/// and what it brings, as (path, the name it is known by here).
fn uses(code: &str) -> Vec<(bool, String, String)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let is_word_start = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let Some(end) = rest[at..].find(';') else { break };
        if is_word_start {
            let before = rest[..at].trim_end();
            let public = before.ends_with("pub") || before.ends_with("pub(crate)");
            for (path, name) in expand_named(&rest[at + 4..at + end]) {
                out.push((public, path, name));
            }
        }
        rest = &rest[at + end..];
    }
    out
}

/// `code` without its `use` declarations.
fn without_uses(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let is_word_start = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let Some(end) = rest[at..].find(';') else { break };
        out.push_str(&rest[..at]);
        if !is_word_start {
            out.push_str(&rest[at..at + end]);
        }
        rest = &rest[at + end..];
    }
    out.push_str(rest);
    out
}

/// `path` from the file whose module is `here`, which declares `declared`:
/// `child::x` names one of those children.
fn absolute_from(path: &str, here: &[String], declared: &[String]) -> Option<Vec<String>> {
    let first = path.split("::").next().unwrap_or("").trim();
    if declared.iter().any(|c| c == first) {
        return Some(here.iter().cloned().chain(path.split("::").map(|s| s.trim().to_string())).collect());
    }
    absolute(path, here)
}

/// `ident(::ident)*` starting at `at` in `s`.
fn path_at(s: &str, at: usize) -> &str {
    let end = s[at..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(s.len(), |e| at + e);
    s[at..end].trim_end_matches(':')
}

/// The child modules a file declares with `mod name;` (or `pub mod`).
fn children(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub(crate) ").or_else(|| line.strip_prefix("pub ")).unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

fn imports(text: &str, here: &[String], tree: &Tree) -> BTreeSet<String> {
    let code = code(text);
    let mut found = BTreeSet::new();
    // Names brought in as modules, to follow their use in the code: first
    // the children the file declares itself (`mod fire;` then `fire::x`).
    let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let declared = children(&code);
    for child in &declared {
        let path: Vec<String> = here.iter().cloned().chain([child.clone()]).collect();
        if tree.modules.contains_key(&path) {
            aliases.insert(child.clone(), path);
        }
    }
    for (public, path, name) in uses(&code) {
        let Some(abs) = absolute_from(&path, here, &declared) else { continue };
        // A re-export of the file's own children is its face.
        let own = abs.len() > here.len() && abs[..here.len()] == *here;
        if !(public && own) {
            if let Some(file) = resolve(&abs, tree) {
                found.insert(file);
            }
        }
        if tree.modules.contains_key(&abs) {
            aliases.insert(name, abs);
        }
    }
    // The rest is read in the code outside the `use` declarations.
    let code = without_uses(&code);
    for (i, _) in code.match_indices("crate::server::") {
        if let Some(file) = absolute(path_at(&code, i), here).and_then(|abs| resolve(&abs, tree)) {
            found.insert(file);
        }
    }
    for (i, _) in code.match_indices("super::") {
        if i > 0 && code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        // `super::{a, b}` is a group, read with the `use` it is in.
        if code[i..].trim_start_matches("super::").starts_with('{') {
            continue;
        }
        if let Some(file) = absolute(path_at(&code, i), here).and_then(|abs| resolve(&abs, tree)) {
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
            if let Some(file) = resolve(&abs, tree) {
                found.insert(file);
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
    let texts = all.iter().map(|f| (f.strip_prefix(&root).unwrap().display().to_string(), std::fs::read_to_string(f).unwrap())).collect();
    graph_of(texts)
}

/// The import graph of files given as (path under `src/server`, text).
fn graph_of(texts: Vec<(String, String)>) -> BTreeMap<String, BTreeSet<String>> {
    let texts: Vec<(Vec<String>, String, String)> =
        texts.into_iter().map(|(path, text)| (module_of(Path::new(""), Path::new(&path)), path, code(&text))).collect();
    let modules: BTreeMap<Vec<String>, String> = texts.iter().map(|(here, path, _)| (here.clone(), path.clone())).collect();
    let mut reexports = BTreeMap::new();
    for (here, _, code) in &texts {
        let declared = children(code);
        for (public, path, name) in uses(code) {
            if let (true, Some(abs)) = (public, absolute_from(&path, here, &declared)) {
                reexports.insert(here.iter().cloned().chain([name]).collect::<Vec<_>>(), abs);
            }
        }
    }
    let tree = Tree { modules, reexports };
    let mut graph = BTreeMap::new();
    for (here, path, code) in &texts {
        let mut to = imports(code, here, &tree);
        to.remove(path);
        graph.insert(path.clone(), to);
    }
    graph
}

/// The domain of a file of the server: its first folder, or the file.
fn domain(file: &str) -> &str {
    file.split('/').next().unwrap_or(file).trim_end_matches(".rs")
}

/// The server's domains from the floor up. A file may import its own domain
/// and those listed before it; an import of one listed after it runs back
/// up. The floor: ids and clocks, the one error shape, the database, the
/// configuration, what the process counts, notes between instances, what
/// of HTTP every domain shares, the state handlers are given. Then the
/// domains, each using those before it; on top, what operators use, the
/// router and its layers, start-up and the command line.
const FLOORS: &[&str] = &[
    "ids", "clock", "error", "db", "config", "metrics", "bus", "http", "state", "accounts", "standards", "lessons", "material", "audit", "safety", "chats",
    "classes", "lti", "reactions", "ops", "edge", "startup", "cli",
];

/// The imports that still run back up, each named once (file → file). This
/// list only shrinks: a new import running back up fails the test, and so
/// does one listed here that is gone (take it off the list).
///
/// What they are: the state names the services of the domains above it
/// (the turn hub, the lesson pages, the providers' and platforms' caches,
/// the reader sandbox, the scheduler, the listener of lessons); accounts
/// and chats read a class's membership; lessons start the assistant on a
/// version and read material; classes and material queue reactions; a
/// class's results go back to the LMS.
const STILL_BACK_UP: &[(&str, &str)] = &[
    ("accounts/auth.rs", "classes.rs"),
    ("accounts/routes.rs", "classes.rs"),
    ("accounts/school_routes.rs", "lti/keys.rs"),
    ("accounts/school_routes.rs", "lti/platforms.rs"),
    ("accounts/school_routes.rs", "standards/frameworks.rs"),
    ("accounts/sso/identities.rs", "classes.rs"),
    ("accounts/sso/routes.rs", "classes.rs"),
    ("chats.rs", "classes.rs"),
    ("chats/turns/desk.rs", "classes.rs"),
    ("chats/turns/desk.rs", "classes/sheets.rs"),
    ("chats/turns/document.rs", "classes/evidence.rs"),
    ("chats/turns/document.rs", "classes/feedback.rs"),
    ("chats/turns/store/chat_start.rs", "classes.rs"),
    ("classes/learn.rs", "lti/grades.rs"),
    ("classes/routes.rs", "reactions.rs"),
    ("classes/wrong_answers.rs", "reactions.rs"),
    ("classes/wrong_answers.rs", "reactions/intents.rs"),
    ("lessons/forms.rs", "material/sandbox.rs"),
    ("lessons/imports.rs", "material/extract.rs"),
    ("lessons/library.rs", "chats/turns/hub.rs"),
    ("lessons/library.rs", "material/sources.rs"),
    ("lessons/versions.rs", "chats/turns.rs"),
    ("lessons/versions.rs", "chats/turns/kind.rs"),
    ("lessons/versions.rs", "chats/turns/on_behalf.rs"),
    ("material/routes.rs", "reactions.rs"),
    ("material/routes.rs", "reactions/intents.rs"),
    ("state.rs", "accounts/sso/providers.rs"),
    ("state.rs", "chats/ai.rs"),
    ("state.rs", "chats/turns/hub.rs"),
    ("state.rs", "lessons/announce.rs"),
    ("state.rs", "lessons/live.rs"),
    ("state.rs", "lti/platforms.rs"),
    ("state.rs", "lti/tokens.rs"),
    ("state.rs", "material/sandbox.rs"),
    ("state.rs", "reactions/scheduler.rs"),
];

/// Every import in `graph` from a domain to one on a higher floor.
fn back_up(graph: &BTreeMap<String, BTreeSet<String>>) -> Result<BTreeSet<(String, String)>, String> {
    let floor = |file: &str| FLOORS.iter().position(|d| *d == domain(file)).ok_or_else(|| format!("{file}: its domain `{}` stands on no floor of FLOORS", domain(file)));
    let mut out = BTreeSet::new();
    for (from, tos) in graph {
        for to in tos {
            if floor(to)? > floor(from)? {
                out.insert((from.clone(), to.clone()));
            }
        }
    }
    Ok(out)
}

#[test]
fn no_file_of_the_server_imports_round_a_circle() {
    let graph = server_graph();
    assert!(graph.len() > 60, "read the server's files: {}", graph.len());
    // The reader sees what it must: the state is read by the router, and
    // the state reads the configuration.
    assert!(graph["edge/router.rs"].contains("state.rs"), "{:?}", graph["edge/router.rs"]);
    assert!(graph["state.rs"].contains("config.rs"), "{:?}", graph["state.rs"]);
    assert!(graph["accounts/schools.rs"].contains("ids.rs"), "{:?}", graph["accounts/schools.rs"]);
    // A parent calling the child it declared is an import too.
    assert!(graph["reactions.rs"].contains("reactions/fire.rs"), "{:?}", graph["reactions.rs"]);
    if let Some(c) = circle(&graph) {
        panic!("these files of src/server import each other round a circle: {}", c.join(" → "));
    }
}

#[test]
fn the_domains_of_the_server_stand_on_their_floors() {
    let graph = server_graph();
    let found = back_up(&graph).unwrap_or_else(|e| panic!("{e}"));
    let listed: BTreeSet<(String, String)> = STILL_BACK_UP.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    let new: Vec<String> = found.difference(&listed).map(|(a, b)| format!("{a} → {b}")).collect();
    assert!(new.is_empty(), "these imports run back up, from a domain to one above it (FLOORS): {}", new.join(", "));
    let gone: Vec<String> = listed.difference(&found).map(|(a, b)| format!("(\"{a}\", \"{b}\")")).collect();
    assert!(gone.is_empty(), "these imports no longer run back up; take them off STILL_BACK_UP: {}", gone.join(", "));
    // The lessons announce and the reactions listen, never the reverse.
    assert!(!graph.iter().any(|(f, to)| domain(f) == "lessons" && to.iter().any(|t| domain(t) == "reactions")), "a lesson file imports the reactions");
    // The floor of HTTP knows no domain; the router is on top.
    assert!(graph.iter().filter(|(f, _)| domain(f) == "http").all(|(_, to)| to.iter().all(|t| FLOORS.iter().position(|d| *d == domain(t)) < FLOORS.iter().position(|d| *d == "state"))));
}

#[test]
fn a_floor_out_of_order_and_a_new_domain_are_refused() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("db.rs".into(), ["lessons.rs".to_string()].into());
    assert_eq!(back_up(&graph), Ok([("db.rs".to_string(), "lessons.rs".to_string())].into()));
    graph.insert("garden/beds.rs".into(), ["db.rs".to_string()].into());
    assert!(back_up(&graph).unwrap_err().contains("`garden`"));
}

#[test]
fn a_circle_through_a_child_declared_with_mod_is_found() {
    // The circle of #65: a file calls the child it declared (`mod fire;`
    // then `fire::schedule`), the child imports a third file, which imports
    // the first; and a re-export leads to the file that defines the name.
    let texts = vec![
        ("reactions.rs".to_string(), "pub mod fire;\npub mod intents;\npub use intents::Happening;\nfn queue() { fire::schedule(); }\n".to_string()),
        ("reactions/fire.rs".to_string(), "use crate::server::lessons::carry::carry;\npub fn schedule() {}\n".to_string()),
        ("reactions/intents.rs".to_string(), "pub struct Happening;\n".to_string()),
        ("lessons.rs".to_string(), "pub mod carry;\n".to_string()),
        ("lessons/carry.rs".to_string(), "use crate::server::reactions::{self, Happening};\npub fn carry() { reactions::queue(); }\n".to_string()),
    ];
    let graph = graph_of(texts);
    assert!(graph["reactions.rs"].contains("reactions/fire.rs"), "{graph:?}");
    assert!(!graph["reactions.rs"].contains("reactions/intents.rs"), "a re-export of a child is the parent's face: {graph:?}");
    assert!(graph["lessons/carry.rs"].contains("reactions/intents.rs"), "{graph:?}");
    assert_eq!(circle(&graph).map(|c| c.len()), Some(3), "{graph:?}");
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
