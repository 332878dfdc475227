//! Fields of a flat JSON object read by hand, for the few answers and events
//! the browser reads that way: a derived deserialiser is code of its own in
//! the bundle for every type, while these share one small reader (and no
//! float parser: numbers are read digit by digit).

/// The string value of `"key":` in a flat JSON object, unescaped; `None`
/// when the key is missing or not a string.
pub fn string_field(json: &str, key: &str) -> Option<String> {
    let at = json.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let mut out = String::new();
    let mut chars = json[at..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?).unwrap_or('\u{fffd}'));
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The number value of `"key":` in a flat JSON object, as written by the
/// server (`0.42`, `3`, `1e-3` is not written and reads as `None`).
pub fn number_field(json: &str, key: &str) -> Option<f32> {
    let at = json.find(&format!("\"{key}\":"))? + key.len() + 3;
    let text: &str = json[at..].split([',', '}']).next()?.trim();
    let (whole, part) = text.split_once('.').unwrap_or((text, ""));
    // The digits after the point as one integer, divided once: exact enough
    // that a float written by the server (at most nine digits) reads back
    // as the same float.
    let part = &part[..part.len().min(18)];
    let fraction = if part.is_empty() { 0 } else { part.parse::<u64>().ok()? };
    let value = whole.parse::<u32>().ok()? as f64 + fraction as f64 / 10f64.powi(part.len() as i32);
    Some(value as f32)
}

/// The whole-number value of `"key":` (`-3`, `12`); `None` when missing or
/// not a whole number.
pub fn int_field(json: &str, key: &str) -> Option<i64> {
    let at = json.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = json[at..].trim_start();
    let end = rest.char_indices().find(|(i, c)| !(c.is_ascii_digit() || (*i == 0 && *c == '-'))).map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

/// The objects of the array that follows `"key":`, each as its JSON text
/// (objects of flat fields, as the server writes them): strings are walked
/// over, so braces inside them do not count.
pub fn array_objects<'a>(json: &'a str, key: &str) -> Vec<&'a str> {
    let Some(at) = json.find(&format!("\"{key}\":[")) else { return Vec::new() };
    let rest = &json[at + key.len() + 4..];
    let (mut out, mut depth, mut start, mut in_string, mut escaped) = (Vec::new(), 0usize, 0usize, false, false);
    for (i, c) in rest.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ if in_string => {}
            '{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    out.push(&rest[start..=i]);
                }
            }
            ']' if depth == 0 => break,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_and_arrays_of_objects_are_read() {
        assert_eq!(int_field(r#"{"a":12,"b":-3}"#, "b"), Some(-3));
        assert_eq!(int_field(r#"{"a":12}"#, "a"), Some(12));
        assert_eq!(int_field(r#"{"a":"12"}"#, "a"), None);
        let json = r#"{"errors":[{"m":"a } b { \" ]"},{"m":"c"}],"x":[{"m":"no"}]}"#;
        assert_eq!(array_objects(json, "errors"), [r#"{"m":"a } b { \" ]"}"#, r#"{"m":"c"}"#]);
        assert!(array_objects(json, "missing").is_empty());
    }

    #[test]
    fn numbers_are_read_digit_by_digit() {
        assert_eq!(number_field(r#"{"a":"x","fraction":0.25}"#, "fraction"), Some(0.25));
        assert_eq!(number_field(r#"{"fraction":1,"b":2}"#, "fraction"), Some(1.0));
        // What the server writes reads back as the same float.
        for f in [0.27038443f32, 0.2912, 0.9499999, 0.001] {
            let json = serde_json::to_string(&serde_json::json!({ "fraction": f })).unwrap();
            assert_eq!(number_field(&json, "fraction"), Some(f), "{json}");
        }
        assert_eq!(number_field(r#"{"fraction":null}"#, "fraction"), None);
        assert_eq!(number_field(r#"{"other":0.5}"#, "fraction"), None);
        assert_eq!(number_field(r#"{"fraction":-0.5}"#, "fraction"), None);
    }

    #[test]
    fn strings_are_unescaped() {
        assert_eq!(string_field(r#"{"m":"a\"b\nc\u00e9"}"#, "m").as_deref(), Some("a\"b\nc\u{e9}"));
        assert_eq!(string_field(r#"{"m":3}"#, "m"), None);
    }
}
