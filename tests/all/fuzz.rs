//! Property tests for the parsers that read what others wrote: the SSE
//! reader, tool-call assembly and tool arguments, the lesson parser and
//! validator, the quiz package reader (whatever it reads becomes a valid
//! lesson or a sentence), the markdown renderer (whose output must stay inert), and the
//! readers of teachers' material (any bytes as any kind: read or refused in
//! words, PDFs in their child process, never a panic of the server's).
//!
//! `make test` runs each with proptest's default number of cases; `make fuzz`
//! runs them with `PROPTEST_CASES` raised (see the Makefile).

use margin::{
    agent::assemble::ToolCallAssembler,
    chat::{
        markdown::{render, MarkdownStream},
        sse::{SseMessage, SseParser},
        tool_args::ToolArgs,
    },
    lesson,
};
use proptest::prelude::*;

// ---------- SSE ----------

fn field_text() -> impl Strategy<Value = String> {
    // No line breaks inside one line's value; anything else, multi-byte included.
    "[a-zA-Z0-9 :_{}\"é€😀\t-]{0,20}"
}

fn sse_event() -> impl Strategy<Value = SseMessage> {
    ("[a-z_]{1,10}", prop::collection::vec(field_text(), 1..4), prop::option::of("[0-9]{1,5}")).prop_map(|(event, lines, id)| {
        SseMessage { event, data: lines.join("\n"), id }
    })
}

/// What a reader should see: an event without an `id:` line keeps the last
/// id set (the stream's "last event ID" carries over).
fn as_read(events: &[SseMessage]) -> Vec<SseMessage> {
    let mut last = None;
    events
        .iter()
        .map(|e| {
            if e.id.is_some() {
                last = e.id.clone();
            }
            SseMessage { id: last.clone(), ..e.clone() }
        })
        .collect()
}

fn wire(events: &[SseMessage], ending: &str) -> Vec<u8> {
    let mut out = String::new();
    for e in events {
        out.push_str(&format!(": a comment{ending}"));
        if let Some(id) = &e.id {
            out.push_str(&format!("id: {id}{ending}"));
        }
        out.push_str(&format!("event: {}{ending}", e.event));
        for line in e.data.split('\n') {
            out.push_str(&format!("data: {line}{ending}"));
        }
        out.push_str(ending);
    }
    out.into_bytes()
}

fn feed(parser: &mut SseParser, bytes: &[u8], cuts: &[usize]) -> Vec<SseMessage> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for c in cuts.into_iter().chain([bytes.len()]) {
        out.extend(parser.push(&bytes[from..c]));
        from = c;
    }
    out
}

proptest! {
    #[test]
    fn sse_events_survive_any_chunking_and_line_ending(
        events in prop::collection::vec(sse_event(), 0..6),
        ending in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let bytes = wire(&events, ending);
        let got = feed(&mut SseParser::new(), &bytes, &cuts);
        prop_assert_eq!(got, as_read(&events));
    }

    #[test]
    fn sse_parsing_any_bytes_does_not_depend_on_chunking(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = SseParser::new().push(&bytes);
        let pieces = feed(&mut SseParser::new(), &bytes, &cuts);
        prop_assert_eq!(whole, pieces);
    }
}

// ---------- Tool calls ----------

#[derive(Clone, Debug)]
struct Call {
    id: String,
    name: String,
    args: String,
}

fn call() -> impl Strategy<Value = Call> {
    ("call_[a-z0-9]{4,8}", "[a-z_]{3,12}", "[ -~é]{0,60}").prop_map(|(id, name, args)| Call { id, name, args })
}

/// Splits `s` at char boundaries chosen by `cuts`.
fn pieces(s: &str, cuts: &[usize]) -> Vec<String> {
    let bounds: Vec<usize> = (0..=s.len()).filter(|i| s.is_char_boundary(*i)).collect();
    let mut at: Vec<usize> = cuts.iter().map(|c| bounds[c % bounds.len()]).collect();
    at.sort_unstable();
    at.dedup();
    let mut out = Vec::new();
    let mut from = 0;
    for c in at.into_iter().chain([s.len()]) {
        if c > from {
            out.push(s[from..c].to_string());
            from = c;
        }
    }
    out
}

proptest! {
    #[test]
    fn interleaved_tool_call_deltas_assemble_to_the_calls_sent(
        calls in prop::collection::vec(call(), 1..5),
        cuts in prop::collection::vec(any::<usize>(), 0..10),
        order in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        // OpenAI style: the first delta of each call has its id and name,
        // arguments follow in pieces, calls interleaved by index.
        let mut queues: Vec<Vec<(Option<String>, Option<String>, Option<String>)>> = calls
            .iter()
            .map(|c| {
                let mut q = vec![(Some(c.id.clone()), Some(c.name.clone()), None)];
                q.extend(pieces(&c.args, &cuts).into_iter().map(|p| (None, None, Some(p))));
                q.reverse();
                q
            })
            .collect();
        let mut a = ToolCallAssembler::new();
        let mut pick = order.into_iter().cycle();
        while queues.iter().any(|q| !q.is_empty()) {
            let live: Vec<usize> = (0..queues.len()).filter(|i| !queues[*i].is_empty()).collect();
            let i = live[usize::from(pick.next().unwrap_or(0)) % live.len()];
            let (id, name, args) = queues[i].pop().unwrap();
            a.push(i as u32, id.as_deref(), name.as_deref(), args.as_deref());
        }
        // Calls come out in the order they started, which the interleaving chose.
        let mut done = a.finish();
        prop_assert_eq!(done.len(), calls.len());
        let mut calls = calls;
        done.sort_by(|x, y| (&x.id, &x.name).cmp(&(&y.id, &y.name)));
        calls.sort_by(|x, y| (&x.id, &x.name).cmp(&(&y.id, &y.name)));
        for (got, sent) in done.iter().zip(&calls) {
            prop_assert_eq!(&got.id, &sent.id);
            prop_assert_eq!(&got.name, &sent.name);
            let want = if sent.args.trim().is_empty() { "{}".to_string() } else { sent.args.clone() };
            prop_assert_eq!(&got.arguments, &want);
        }
    }

    #[test]
    fn any_tool_call_deltas_assemble_without_panicking(
        deltas in prop::collection::vec(
            (0u32..4, prop::option::of("[a-z0-9]{0,4}"), prop::option::of("[a-z]{0,4}"), prop::option::of("[ -~]{0,8}")),
            0..30,
        ),
    ) {
        let mut a = ToolCallAssembler::new();
        for (i, id, name, args) in &deltas {
            a.push(*i, id.as_deref(), name.as_deref(), args.as_deref());
        }
        for c in a.finish() {
            prop_assert!(!c.id.is_empty());
            let args = ToolArgs::from_model(&c.arguments);
            prop_assert!(serde_json::from_str::<serde_json::Value>(args.json()).is_ok());
        }
    }

    #[test]
    fn tool_arguments_are_always_json_and_keep_what_the_model_sent(raw in "[ -~é\\n]{0,80}") {
        let args = ToolArgs::from_model(&raw);
        let value: serde_json::Value = serde_json::from_str(args.json()).expect("always JSON");
        match serde_json::from_str::<serde_json::Value>(&raw) {
            Ok(sent) => prop_assert_eq!(value, sent),
            Err(_) => prop_assert_eq!(value, serde_json::Value::String(raw.clone())),
        }
        let _ = args.brief();
    }
}

// ---------- Lessons ----------

fn xmlish() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "<lesson title=\"T\" lang=\"en\">", "</lesson>", "<p>", "</p>", "<heading level=\"2\">", "</heading>",
        "<exercise kind=\"fill-in\" title=\"E\">", "</exercise>", "<blank answer=\"a\"/>", "<sentence>", "</sentence>",
        "<note>", "</note>", "<b>", "</b>", "<i>", "</i>", "text", " ", "&amp;", "&lt;", "&#x1F600;", "&bogus;",
        "<!DOCTYPE x [<!ENTITY e \"boom\">]>", "<?pi x?>", "<!-- c -->", "<![CDATA[<p>]]>", "\"", "'", "<", ">",
        "<p id=\"b1\">", "<p id=\"b1\">", "<script>", "é", "\u{0}", "<x:y xmlns:x=\"u\">", "</x:y>",
    ]);
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #[test]
    fn the_lesson_parser_and_validator_take_anything_without_panicking(xml in xmlish()) {
        if let Ok(root) = lesson::parse(&xml) {
            let errors = lesson::validate(&root);
            if errors.is_empty() {
                // A valid lesson renders, and reads back as the same lesson.
                let _ = lesson::render_both(&xml);
                let again = lesson::parse(&root.to_xml()).expect("its own XML parses");
                prop_assert!(lesson::validate(&again).is_empty());
                prop_assert_eq!(again.to_xml(), root.to_xml());
            }
        }
        let _ = lesson::normalize(&xml);
    }

    #[test]
    fn the_lesson_parser_takes_any_text(text in any::<String>()) {
        let _ = lesson::parse(&text).map(|root| lesson::validate(&root));
    }
}

// ---------- Quiz packages ----------

fn qtiish() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "<assessmentItem identifier=\"i\" title=\"T\" label=\"margin:writing\">", "<assessmentItem identifier=\"q-1\">", "</assessmentItem>",
        "<responseDeclaration identifier=\"RESPONSE\" cardinality=\"multiple\">", "<responseDeclaration identifier=\"b1\">", "</responseDeclaration>",
        "<correctResponse>", "</correctResponse>", "<value>A</value>", "<value>b1</value>", "<value></value>",
        "<mapping>", "</mapping>", "<mapEntry mapKey=\"x\" mappedValue=\"1\"/>", "<mapEntry mapKey=\",\" mappedValue=\"-1\"/>",
        "<itemBody>", "</itemBody>", "<p>", "</p>", "<div>", "</div>", "<em>", "</em>", "<b>", "</b>", "<img src=\"x\"/>", "<br/>",
        "<choiceInteraction responseIdentifier=\"RESPONSE\" maxChoices=\"0\">", "</choiceInteraction>", "<prompt>", "</prompt>",
        "<simpleChoice identifier=\"A\">", "<simpleChoice identifier=\"1x\">", "</simpleChoice>", "True", "False",
        "<orderInteraction responseIdentifier=\"RESPONSE\">", "</orderInteraction>", "<textEntryInteraction responseIdentifier=\"b1\" placeholderText=\"h\"/>",
        "<extendedTextInteraction responseIdentifier=\"w1\" expectedLines=\"900\">", "</extendedTextInteraction>", "<matchInteraction/>",
        "<rubricBlock view=\"scorer candidate\">", "</rubricBlock>", "<table class=\"margin-rubric\"><tr><th>N</th><td><span class=\"margin-points\">7</span>x</td></tr></table>",
        "<questestinterop>", "</questestinterop>", "<item ident=\"i1\">", "</item>", "<response_lid rcardinality=\"Multiple\">", "</response_lid>",
        "<response_label ident=\"a\"><material><mattext texttype=\"text/html\">&lt;p&gt;hi ___&lt;/p</mattext></material></response_label>",
        "<response_str/>", "<respcondition><conditionvar><varequal>a</varequal><not><varequal>b</varequal></not></conditionvar><setvar>100</setvar></respcondition>",
        "<fieldlabel>cc_profile</fieldlabel>", "<fieldentry>cc.fib.v0p1</fieldentry>", "<qtimetadatafield>", "</qtimetadatafield>",
        "<qti-assessment-item identifier=\"z\">", "</qti-assessment-item>", "<qti-item-body>", "</qti-item-body>",
        "text", " ", "&amp;", "&#x1F600;", "<!DOCTYPE x [<!ENTITY e \"boom\">]>", "<", ">", "\"", "é",
    ]);
    prop::collection::vec(token, 0..60).prop_map(|t| t.concat())
}

fn package_with(item: &str) -> Vec<u8> {
    use std::io::Write;
    let manifest = r#"<manifest><resources><resource type="imsqti_item_xmlv2p1" href="i.xml"/><resource type="imsqti_xmlv1p2" href="q.xml"/></resources></manifest>"#;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in [("imsmanifest.xml", manifest), ("i.xml", item), ("q.xml", item)] {
        zip.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

proptest! {
    /// Whatever a package holds, the reader makes a lesson the format takes,
    /// or says why not; it never panics.
    #[test]
    fn any_quiz_item_becomes_a_valid_lesson_or_a_sentence(item in qtiish()) {
        for read in [lesson::qti::lesson_of_qti_xml(&item), Some(lesson::qti::lesson_of_package(&package_with(&item)))].into_iter().flatten() {
            match read {
                Ok(imported) => prop_assert!(lesson::normalize(&imported.xml).is_ok(), "{}", imported.xml),
                Err(why) => prop_assert!(why.ends_with('.') || why.ends_with(')'), "{why}"),
            }
        }
    }

    #[test]
    fn any_bytes_as_a_package_are_read_or_refused(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = lesson::qti::is_package(&bytes);
        prop_assert!(lesson::qti::lesson_of_package(&bytes).is_err());
    }
}

// ---------- Markdown ----------

const TAGS: &[&str] = &[
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "code", "pre", "blockquote", "ul", "ol",
    "li", "a", "table", "thead", "tbody", "tr", "th", "td", "input",
];

/// Checks every tag of `html`: its name is allowed, its attributes are, and a
/// link goes only to http, https or mailto.
fn inert(html: &str) -> Result<(), String> {
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>').ok_or_else(|| format!("unclosed tag in {html}"))?;
        let tag = &after[..close];
        rest = &after[close + 1..];
        let tag = tag.strip_prefix('/').unwrap_or(tag).trim_end_matches('/').trim_end();
        let (name, mut attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        if !TAGS.contains(&name) {
            return Err(format!("tag <{name}> in {html}"));
        }
        while !attrs.trim().is_empty() {
            let a = attrs.trim_start();
            let (attr, value, tail) = match a.split_once('=') {
                Some((attr, v)) if !attr.contains(' ') => {
                    let v = v.strip_prefix('"').ok_or_else(|| format!("unquoted attribute in {html}"))?;
                    let end = v.find('"').ok_or_else(|| format!("unterminated attribute in {html}"))?;
                    (attr, &v[..end], &v[end + 1..])
                }
                _ => {
                    let (attr, tail) = a.split_once(' ').unwrap_or((a, ""));
                    (attr, "", tail)
                }
            };
            let ok = match (name, attr) {
                ("a", "href") => {
                    let v = value.to_ascii_lowercase();
                    v.starts_with("http://") || v.starts_with("https://") || v.starts_with("mailto:")
                }
                ("a", "target") => value == "_blank",
                ("a", "rel") => value == "noopener noreferrer",
                ("a", "title") => true,
                ("ol", "start") => value.chars().all(|c| c.is_ascii_digit()),
                ("code", "class") => value.starts_with("language-"),
                ("input", "type") => value == "checkbox",
                ("input", "disabled" | "checked") => true,
                ("th" | "td", "style") => value.starts_with("text-align: ") && value[12..].chars().all(|c| c.is_ascii_alphabetic()),
                _ => false,
            };
            if !ok {
                return Err(format!("attribute {attr}=\"{value}\" on <{name}> in {html}"));
            }
            if value.contains('<') || value.contains('>') {
                return Err(format!("markup inside an attribute in {html}"));
            }
            attrs = tail;
        }
    }
    Ok(())
}

fn markdownish() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "<", ">", "/", "\"", "'", "=", "&", "#", ";", "(", ")", "[", "]", "!", ":", "`", "```", "*", "_", "~", "|", "-", "\n",
        "\n\n", " ", "\t", "\\", "script", "img", "a", "href", "src", "onerror", "onclick", "javascript", "JaVaScRiPt",
        "data", "vbscript", "alert(1)", "svg", "style", "iframe", "http://x", "https://y", "mailto:z", "&#106;", "&#x6A;",
        "&colon;", "&lt;", "%0a", "\u{0}", "é", "1.", "> ", "- [ ] ", "<!--", "-->", "<![CDATA[",
    ]);
    prop::collection::vec(token, 0..60).prop_map(|t| t.concat())
}

/// Known cross-site-scripting payloads, including mutation XSS and entity-encoded schemes.
const PAYLOADS: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<svg onload=alert(1)>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](&#x6A;avascript&colon;alert(1))",
    "[x](java\tscript:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<javascript:alert(1)>",
    "![x](javascript:alert(1))",
    "![x\"onerror=\"alert(1)](https://x.example/a.png)",
    "[x](https://x.example \"title\\\" onmouseover=\\\"alert(1)\")",
    "[x][r]\n\n[r]: javascript:alert(1)",
    "<iframe src=\"https://evil.example\"></iframe>",
    "<style>body{display:none}</style>",
    "<details open ontoggle=alert(1)>",
    "```\"><script>alert(1)</script>\nx\n```",
    "``` onmouseover=alert(1)\nx\n```",
    "| a |\n|:-|\n| <img src=x onerror=alert(1)> |",
    "<!--><img src=x onerror=alert(1)>-->",
    "<![CDATA[<img src=x onerror=alert(1)>]]>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "\u{0}<script>alert(1)</script>",
];

#[test]
fn known_payloads_render_inert() {
    for p in PAYLOADS {
        let html = render(p);
        inert(&html).unwrap_or_else(|e| panic!("payload {p:?}: {e}"));
    }
}

proptest! {
    #[test]
    fn rendered_markdown_only_has_allowed_tags_attributes_and_schemes(md in markdownish()) {
        let html = render(&md);
        if let Err(e) = inert(&html) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn streamed_markdown_is_as_inert_as_whole(md in markdownish(), cuts in prop::collection::vec(any::<usize>(), 0..8)) {
        let mut stream = MarkdownStream::new();
        for piece in pieces(&md, &cuts) {
            let update = stream.push(&piece);
            // Each block as the conversation's view renders it.
            if let Some(done) = &update.finished {
                if let Err(e) = inert(&render(done)) {
                    prop_assert!(false, "{}", e);
                }
            }
            if let Err(e) = inert(&render(&update.tail)) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}

#[test]
fn the_inertness_check_itself_catches_what_it_must() {
    assert!(inert("<p>fine &lt;script&gt;</p>").is_ok());
    assert!(inert("<p><script>alert(1)</script></p>").is_err());
    assert!(inert("<img src=\"x\">").is_err());
    assert!(inert("<a href=\"javascript:alert(1)\">x</a>").is_err());
    assert!(inert("<a href=\"https://x\" onclick=\"y\">x</a>").is_err());
    assert!(inert("<th style=\"color: red\">").is_err());
}

// ---------- the material readers ----------

use margin::server::material::{
    extract::{self, MAX_TEXT_BYTES},
    sandbox::{ChildLimits, Extractor, Refusal},
};

fn htmlish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("<script>".to_string()),
            Just("</SCRIPT>".to_string()),
            Just("<style a='>'>".to_string()),
            Just("</style".to_string()),
            Just("<!--".to_string()),
            Just("-->".to_string()),
            Just("<p>".to_string()),
            Just("&amp;".to_string()),
            Just("&#x1F600;".to_string()),
            Just("&#99999999;".to_string()),
            Just("\u{212A}".to_string()),
            Just("İ".to_string()),
            "[a-zA-Z <>/&;#]{0,6}",
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

fn zip_with(document: &str) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("word/document.xml", zip::write::SimpleFileOptions::default()).unwrap();
    zip.write_all(document.as_bytes()).unwrap();
    zip.finish().unwrap().into_inner()
}

/// The server's own binary reading a file in its child process.
fn in_child(name: &str, bytes: &[u8]) -> Result<String, Refusal> {
    static RUNTIME: std::sync::LazyLock<tokio::runtime::Runtime> =
        std::sync::LazyLock::new(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap());
    let reader = Extractor::new(Some(env!("CARGO_BIN_EXE_margin").into()), ChildLimits::default(), 1);
    RUNTIME.block_on(reader.text_of(name, bytes))
}

proptest! {
    #[test]
    fn the_html_reader_takes_any_markup_without_panicking(html in htmlish()) {
        let text = extract::html_text(&html);
        prop_assert!(text.len() <= html.len() * 4 + 16);
        prop_assert!(!text.contains("<script") && !text.contains("<style"));
    }

    #[test]
    fn any_bytes_as_any_kind_are_read_or_refused_in_words(bytes in prop::collection::vec(any::<u8>(), 0..512), kind in 0..5usize) {
        let name = ["a.txt", "a.md", "a.html", "a.docx", "a.pdf"][kind];
        match extract::text_of(name, &bytes) {
            Ok(text) => prop_assert!(!text.is_empty() && text.len() <= MAX_TEXT_BYTES),
            Err(why) => prop_assert!(why.contains(name), "{why}"),
        }
    }

    #[test]
    fn any_word_document_text_is_read_or_refused_in_words(document in htmlish()) {
        let bytes = zip_with(&document);
        match extract::text_of("a.docx", &bytes) {
            Ok(text) => prop_assert!(text.len() <= MAX_TEXT_BYTES),
            Err(why) => prop_assert!(why.contains("a.docx"), "{why}"),
        }
    }

    #[test]
    fn the_pdf_stream_check_takes_any_bytes(bytes in prop::collection::vec(prop_oneof![Just(b's'), Just(b'\n'), Just(0x78u8), Just(0x9c), any::<u8>()], 0..512)) {
        let mut pdf = b"%PDF-1.4\nstream\n".to_vec();
        pdf.extend_from_slice(&bytes);
        let _ = extract::pdf_streams_fit(&pdf);
    }
}

proptest! {
    // Each case starts a process: an eighth as many (`make fuzz` raises them too).
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse::<u32>().ok()).map_or(32, |c| (c / 8).max(32))
    ))]
    #[test]
    fn any_pdf_is_read_or_refused_by_its_child_never_by_the_server(bytes in prop::collection::vec(prop_oneof![Just(b'['), Just(b'<'), Just(b'>'), Just(b'/'), Just(b' '), Just(b'\n'), any::<u8>()], 0..2048)) {
        let mut pdf = b"%PDF-1.4\n1 0 obj\n".to_vec();
        pdf.extend_from_slice(&bytes);
        match in_child("a.pdf", &pdf) {
            Ok(text) => prop_assert!(text.len() <= MAX_TEXT_BYTES),
            Err(Refusal::File(why)) => prop_assert!(why.contains("a.pdf"), "{why}"),
            Err(Refusal::Unsafe(name)) => prop_assert_eq!(name, "a.pdf"),
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}
