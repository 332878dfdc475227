//! Settings read from the environment, every one of them checked. A value
//! that does not parse, or lies outside what makes sense, is a problem
//! named in a sentence (which variable, what it must be, what it was); the
//! server collects them all and refuses to start with the list, rather than
//! quietly using a default the operator did not ask for. Every setting read
//! is also recorded with the value in effect, so `margin config` can print
//! the whole configuration, secrets masked.
//!
//! Both the server's configuration (`server::config`) and the agent's
//! (`agent::config`) read through here, which is why it sits beside them
//! rather than in either. No crate is used: `envy` and `figment` map
//! variables onto a struct, but the checks with their sentences (ranges,
//! units, URLs) would still be ours, and they are most of this file.

use std::{collections::HashMap, fmt::Display, str::FromStr};

/// The environment being read, with what was found wrong and what was read.
/// Not `Debug`: it holds every variable, secrets included.
#[derive(Default)]
pub struct Env {
    vars: HashMap<String, String>,
    problems: Vec<String>,
    effective: Vec<(String, String)>,
}

impl Env {
    /// The process's environment.
    pub fn from_process() -> Self {
        Self::from_pairs(std::env::vars())
    }

    /// A given set of variables (tests).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Self { vars: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect(), ..Self::default() }
    }

    /// What was found wrong so far, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// Every setting read, with the value in effect, in the order read.
    pub fn effective(&self) -> &[(String, String)] {
        &self.effective
    }

    /// Adds a problem found by a check that spans settings.
    pub fn problem(&mut self, sentence: impl Into<String>) {
        self.problems.push(sentence.into());
    }

    /// Records a setting's value in effect (for one the caller worked out).
    pub fn record(&mut self, name: &str, shown: impl Into<String>) {
        self.effective.push((name.to_string(), shown.into()));
    }

    /// The variable, trimmed; `None` when unset or blank.
    fn raw(&self, name: &str) -> Option<String> {
        self.vars.get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
    }

    /// A text setting, recorded as it is.
    pub fn text(&mut self, name: &str) -> Option<String> {
        let v = self.raw(name);
        self.record(name, v.clone().unwrap_or_else(|| "(not set)".into()));
        v
    }

    /// A text setting shown as `mask` writes it (a URL with a password).
    pub fn text_masked(&mut self, name: &str, mask: impl Fn(&str) -> String) -> Option<String> {
        let v = self.raw(name);
        self.record(name, v.as_deref().map_or_else(|| "(not set)".to_string(), mask));
        v
    }

    /// A text setting whose value must never be shown: recorded as set or not.
    pub fn secret(&mut self, name: &str) -> Option<String> {
        let v = self.raw(name);
        self.record(name, if v.is_some() { "(set, hidden)" } else { "(not set)" });
        v
    }

    /// A whole number from `min` to `max`, `default` when unset. `unit`
    /// names what it counts, for the sentence.
    pub fn number<T>(&mut self, name: &str, default: T, min: T, max: T, unit: &str) -> T
    where
        T: FromStr + Display + PartialOrd + Copy,
    {
        let value = self.parse_number(name, min, max, unit).unwrap_or(default);
        self.record(name, value.to_string());
        value
    }

    /// A whole number from `min` to `max`, or `None` when unset.
    pub fn optional_number<T>(&mut self, name: &str, min: T, max: T, unit: &str) -> Option<T>
    where
        T: FromStr + Display + PartialOrd + Copy,
    {
        let value = self.parse_number(name, min, max, unit);
        self.record(name, value.map_or_else(|| "(not set)".to_string(), |v| v.to_string()));
        value
    }

    /// The number, checked (a problem when it is set but wrong), not recorded.
    fn parse_number<T>(&mut self, name: &str, min: T, max: T, unit: &str) -> Option<T>
    where
        T: FromStr + Display + PartialOrd + Copy,
    {
        let raw = self.raw(name)?;
        let parsed = raw.parse::<T>().ok().filter(|n| *n >= min && *n <= max);
        if parsed.is_none() {
            self.problems.push(format!("{name} must be a whole number from {min} to {max} ({unit}), not {raw:?}."));
        }
        parsed
    }

    /// Yes or no: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`.
    pub fn flag(&mut self, name: &str, default: bool) -> bool {
        let value = match self.raw(name) {
            None => default,
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    self.problems.push(format!("{name} must be true or false (or 1/0, yes/no, on/off), not {v:?}."));
                    default
                }
            },
        };
        self.record(name, value.to_string());
        value
    }

    /// One of `options` (compared without case), or `None` when unset.
    pub fn choice(&mut self, name: &str, options: &[&'static str]) -> Option<&'static str> {
        let value = self.raw(name).and_then(|v| {
            let found = options.iter().find(|o| o.eq_ignore_ascii_case(&v)).copied();
            if found.is_none() {
                self.problems.push(format!("{name} must be one of {}, not {v:?}.", options.join(", ")));
            }
            found
        });
        self.record(name, value.unwrap_or("(not set)"));
        value
    }

    /// An address beginning `http://` or `https://` with a host, or `None`
    /// when unset.
    pub fn http_url(&mut self, name: &str) -> Option<String> {
        let value = self.raw(name).and_then(|v| {
            let ok = v.split_once("://").is_some_and(|(scheme, rest)| {
                matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") && !rest.split(['/', '?', '#']).next().unwrap_or("").is_empty()
            });
            if !ok {
                self.problems.push(format!("{name} must be an address beginning http:// or https://, such as https://margin.school.org, not {v:?}."));
            }
            ok.then_some(v)
        });
        self.record(name, value.clone().unwrap_or_else(|| "(not set)".into()));
        value
    }

    /// A list separated by commas, each item checked by `parse`; `what`
    /// says what an item must be.
    pub fn list<T>(&mut self, name: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Vec<T> {
        let Some(raw) = self.raw(name) else {
            self.record(name, "(not set)");
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in raw.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match parse(item) {
                Some(v) => out.push(v),
                None => self.problems.push(format!("{name} must list {what}, separated by commas; {item:?} is not one.")),
            }
        }
        self.record(name, raw);
        out
    }

    /// `Ok` when nothing was wrong; otherwise every problem, in one message.
    pub fn finish(&self) -> Result<(), String> {
        if self.problems.is_empty() {
            return Ok(());
        }
        Err(format!(
            "Margin will not start: {} setting{} must be fixed first.\n{}",
            self.problems.len(),
            if self.problems.len() == 1 { "" } else { "s" },
            self.problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_is_a_sentence_naming_it_and_a_good_one_is_used() {
        let mut env = Env::from_pairs([("A", "12"), ("B", "twelve"), ("C", "0"), ("D", "maybe"), ("E", " 7 ")]);
        assert_eq!(env.number("A", 1u32, 1, 100, "days"), 12);
        assert_eq!(env.number("B", 5u32, 1, 100, "days"), 5);
        assert_eq!(env.number("C", 5u32, 1, 100, "days"), 5);
        assert!(env.flag("D", true));
        assert_eq!(env.number("E", 1u32, 1, 100, "days"), 7);
        assert_eq!(env.number("UNSET", 3u32, 1, 100, "days"), 3);
        assert_eq!(
            env.problems(),
            [
                "B must be a whole number from 1 to 100 (days), not \"twelve\".",
                "C must be a whole number from 1 to 100 (days), not \"0\".",
                "D must be true or false (or 1/0, yes/no, on/off), not \"maybe\".",
            ]
        );
        let refusal = env.finish().unwrap_err();
        assert!(refusal.starts_with("Margin will not start: 3 settings must be fixed first."), "{refusal}");
        assert!(refusal.contains("  - B must be"));
    }

    #[test]
    fn urls_choices_and_lists_are_checked() {
        let mut env = Env::from_pairs([("U", "margin.school.org"), ("V", "https://margin.school.org/"), ("P", "Anthropic"), ("Q", "gemini"), ("L", "1, x, 3")]);
        assert_eq!(env.http_url("U"), None);
        assert_eq!(env.http_url("V").as_deref(), Some("https://margin.school.org/"));
        assert_eq!(env.choice("P", &["openai", "anthropic"]), Some("anthropic"));
        assert_eq!(env.choice("Q", &["openai", "anthropic"]), None);
        assert_eq!(env.list("L", "numbers", |i| i.parse::<u8>().ok()), vec![1, 3]);
        assert_eq!(env.problems().len(), 3, "{:?}", env.problems());
        assert!(env.problems()[0].starts_with("U must be an address beginning http://"));
        assert!(env.problems()[2].contains("\"x\" is not one"));
    }

    #[test]
    fn secrets_are_recorded_as_set_never_as_their_value() {
        let mut env = Env::from_pairs([("AI_API_KEY", "sk-secret-123")]);
        assert_eq!(env.secret("AI_API_KEY").as_deref(), Some("sk-secret-123"));
        env.secret("OTHER_KEY");
        let shown = format!("{:?}", env.effective());
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert_eq!(env.effective()[0].1, "(set, hidden)");
        assert_eq!(env.effective()[1].1, "(not set)");
    }
}
