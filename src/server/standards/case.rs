//! Reading a 1EdTech CASE package (the JSON of a `CFPackage`): the
//! framework's `CFDocument` and its `CFItems`. Only what Margin uses is
//! read: the document's identifier, title and creator, and each item's
//! `humanCodingScheme` (the code teachers write) and `fullStatement`. Items
//! without a code (a grade, a domain heading) are left out, since no lesson
//! can name them. Associations, definitions and rubrics are ignored.
//!
//! A package is refused whole, with a sentence saying why, when it is not
//! JSON, is not a CASE package, or is larger than a framework can be.

use serde::Deserialize;

/// The most coded items one framework may hold (the largest published
/// frameworks hold a few thousand).
pub const MAX_ITEMS: usize = 50_000;
/// The longest statement kept, in characters; longer ones are cut.
pub const MAX_STATEMENT_CHARS: usize = 2_000;
/// The longest title kept, in characters.
const MAX_TITLE_CHARS: usize = 200;

/// A framework as Margin keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// The `CFDocument`'s identifier: loading the same framework again replaces it.
    pub identifier: String,
    pub title: String,
    pub creator: String,
    /// (code, statement), each code once, in the package's order.
    pub items: Vec<(String, String)>,
    /// Coded items left out: their code was too long, or listed twice.
    pub skipped: usize,
    /// SHA-256 of the package's bytes, in hex.
    pub digest: String,
}

#[derive(Deserialize)]
struct RawPackage {
    #[serde(rename = "CFDocument")]
    cf_document: Option<RawDocument>,
    #[serde(rename = "CFItems", default)]
    cf_items: Vec<RawItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDocument {
    identifier: Option<String>,
    title: Option<String>,
    creator: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawItem {
    human_coding_scheme: Option<String>,
    full_statement: Option<String>,
}

/// Reads a CASE package from its JSON text.
pub fn read(json: &[u8]) -> Result<Package, String> {
    let raw: RawPackage = serde_json::from_slice(json).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            format!("The file is not JSON ({e}). Upload the framework's CASE package, the JSON file of its CFPackage.")
        } else {
            format!("The file is JSON but not a CASE package ({e}).")
        }
    })?;
    let doc = raw.cf_document.ok_or("The file has no CFDocument: it is not a CASE package. Upload the framework's CFPackage JSON.")?;
    let identifier = doc.identifier.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).ok_or("The CFDocument has no identifier.")?;
    if identifier.chars().count() > 200 {
        return Err("The CFDocument's identifier is longer than 200 characters.".into());
    }
    let title = cut(doc.title.as_deref().unwrap_or_default(), MAX_TITLE_CHARS);
    let title = if title.is_empty() { "Untitled framework".to_string() } else { title };
    let creator = cut(doc.creator.as_deref().unwrap_or_default(), MAX_TITLE_CHARS);
    let mut items: Vec<(String, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut skipped = 0;
    for item in raw.cf_items {
        let Some(code) = item.human_coding_scheme.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()) else { continue };
        if code.chars().count() > crate::lesson::standards::MAX_CODE_LEN || code.contains(char::is_whitespace) || !seen.insert(code.clone()) {
            skipped += 1;
            continue;
        }
        if items.len() == MAX_ITEMS {
            return Err(format!("The framework has more than {MAX_ITEMS} coded items; Margin takes at most that many from one package."));
        }
        items.push((code, cut(item.full_statement.as_deref().unwrap_or_default(), MAX_STATEMENT_CHARS)));
    }
    if items.is_empty() {
        return Err("The package has no items with a code (humanCodingScheme), so no lesson could name one.".into());
    }
    Ok(Package { identifier, title, creator, items, skipped, digest: crate::server::ids::digest(json) })
}

/// `s` on one line, at most `most` characters.
fn cut(s: &str, most: usize) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(most).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(items: &str) -> String {
        format!(r#"{{"CFDocument":{{"identifier":"doc-1","title":"Reading, grade 4","creator":"A state"}},"CFItems":[{items}],"CFAssociations":[]}}"#)
    }

    #[test]
    fn reads_coded_items_and_leaves_out_headings() {
        let p = read(package(r#"{"identifier":"i1","fullStatement":"Grade 4","CFItemType":"Grade"},
            {"identifier":"i2","humanCodingScheme":"RL.4.1","fullStatement":"Refer to  details\nin a text."},
            {"identifier":"i3","humanCodingScheme":" RL.4.2 ","fullStatement":"Determine a theme."}"#).as_bytes()).unwrap();
        assert_eq!(p.identifier, "doc-1");
        assert_eq!(p.title, "Reading, grade 4");
        assert_eq!(p.items, vec![("RL.4.1".into(), "Refer to details in a text.".into()), ("RL.4.2".into(), "Determine a theme.".into())]);
        assert_eq!(p.skipped, 0);
    }

    #[test]
    fn a_code_twice_or_with_spaces_is_skipped_and_counted() {
        let p = read(package(r#"{"humanCodingScheme":"A.1","fullStatement":"x"},{"humanCodingScheme":"A.1","fullStatement":"y"},{"humanCodingScheme":"A 2","fullStatement":"z"}"#).as_bytes()).unwrap();
        assert_eq!(p.items.len(), 1);
        assert_eq!(p.skipped, 2);
    }

    #[test]
    fn what_is_not_a_package_is_refused_with_why() {
        assert!(read(b"{not json").unwrap_err().starts_with("The file is not JSON"));
        assert!(read(b"[1,2]").unwrap_err().contains("not a CASE package"));
        assert!(read(br#"{"CFItems":[]}"#).unwrap_err().contains("no CFDocument"));
        assert!(read(br#"{"CFDocument":{"title":"x"},"CFItems":[]}"#).unwrap_err().contains("no identifier"));
        assert!(read(package("").as_bytes()).unwrap_err().contains("no items with a code"));
        assert!(read(package(r#"{"humanCodingScheme":7}"#).as_bytes()).unwrap_err().contains("not a CASE package"));
    }

    #[test]
    fn a_framework_too_large_is_refused() {
        let items: Vec<String> = (0..=MAX_ITEMS).map(|n| format!(r#"{{"humanCodingScheme":"C.{n}","fullStatement":"s"}}"#)).collect();
        assert!(read(package(&items.join(",")).as_bytes()).unwrap_err().contains("more than 50000"));
    }
}
