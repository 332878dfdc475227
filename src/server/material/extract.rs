//! The text of a teacher's material, read from the file they added: plain
//! text and markdown as they are, HTML without its markup, a Word document
//! (.docx) paragraph by paragraph, a PDF page by page. Anything else, or a
//! file that cannot be read, is a refusal worded for the teacher; nothing is
//! kept of it.
//!
//! Word documents are zip archives of XML: `zip` opens them and `roxmltree`
//! (already the lesson's parser) reads the text, at most `MAX_DOCX_XML_BYTES`
//! unpacked and `MAX_DOCX_NODES` nodes. PDFs are read with `pdf-extract`,
//! once `pdf_streams_fit` has measured what their streams unpack to. HTML
//! is stripped here in one pass rather than with an HTML5 parser (html5ever
//! is a large dependency for what a saved page needs: the text between
//! tags, without scripts and styles, and its entities).
//!
//! These bounds are the readers' own; the server never runs them in its
//! process but in a child with limits on memory, time and stack (`sandbox`),
//! since no bound here can stop a reader that recurses too deep.
//!
//! One cohesive thing (a little over 400 lines): each reader with the caps
//! that keep a hostile file from costing more than its refusal.

use std::io::{Cursor, Read};

/// The largest file taken, in bytes.
pub const MAX_FILE_BYTES: usize = 10 * 1024 * 1024;
/// The longest text kept from one file, in bytes (a whole textbook's worth).
pub const MAX_TEXT_BYTES: usize = 2 * 1024 * 1024;

/// The kinds of file taken, by their name's ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    Markdown,
    Html,
    Docx,
    Pdf,
}


impl Kind {
    /// The kind of a file by its name, or `None` for one not taken.
    pub fn of(file_name: &str) -> Option<Self> {
        let lower = file_name.to_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "txt" => Self::Text,
            "md" | "markdown" => Self::Markdown,
            "html" | "htm" => Self::Html,
            "docx" => Self::Docx,
            "pdf" => Self::Pdf,
            _ => return None,
        })
    }
}

/// The kind of `name` when it is one taken and `bytes` is not too large or
/// empty; otherwise the sentence that says why not. Cheap: the server calls
/// it before starting a reader (`sandbox`).
pub fn precheck(name: &str, bytes: &[u8]) -> Result<Kind, String> {
    let kind = Kind::of(name).ok_or_else(|| {
        format!("“{name}” is not a kind of file Margin can read. Add a .txt, .md, .html, .docx or .pdf file.")
    })?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!("“{name}” is larger than {} MB. Split it or save a shorter part.", MAX_FILE_BYTES / (1024 * 1024)));
    }
    if bytes.is_empty() {
        return Err(format!("“{name}” is empty."));
    }
    Ok(kind)
}

/// The text of `bytes`, a file called `name`, or why it cannot be used.
/// The server runs this in a child process with limits (`sandbox`); called
/// directly, only the readers' own bounds apply.
pub fn text_of(name: &str, bytes: &[u8]) -> Result<String, String> {
    let kind = precheck(name, bytes)?;
    let text = match kind {
        Kind::Text | Kind::Markdown => utf8(name, bytes)?.to_string(),
        Kind::Html => html_text(utf8(name, bytes)?),
        Kind::Docx => docx_text(bytes).map_err(|why| format!("“{name}” could not be read as a Word document ({why}). Open it in Word and save it again as .docx."))?,
        Kind::Pdf => pdf_text(name, bytes)?,
    };
    let text = tidy(&text);
    if text.is_empty() {
        return Err(match kind {
            Kind::Pdf => format!("“{name}” has no text Margin can read: it looks like scanned pages (pictures of text). Add a PDF with real text, or the text itself."),
            _ => format!("“{name}” has no text in it."),
        });
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(format!("“{name}” holds more than {} MB of text. Add the chapters you need one at a time.", MAX_TEXT_BYTES / (1024 * 1024)));
    }
    Ok(text)
}

fn utf8<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|_| format!("“{name}” is not text in UTF-8. Save it as UTF-8 text and add it again."))
}

/// Line ends made `\n`, runs of blank lines cut to one, trailing spaces
/// gone, and no NUL characters (PDFs have them; PostgreSQL refuses them).
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.replace("\r\n", "\n").replace(['\r', '\u{c}'], "\n").replace('\0', "").lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// The text of an HTML page: what is between its tags, blocks on lines of
/// their own, without scripts, styles or comments, entities decoded.
pub fn html_text(html: &str) -> String {
    const BLOCKS: [&str; 16] = ["p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "table", "ul", "ol"];
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |e| &after[e + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let tag = rest[1..gt].trim_start_matches('/').trim();
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>().to_lowercase();
        rest = &rest[gt + 1..];
        if (name == "script" || name == "style") && !tag.ends_with('/') {
            rest = find_closing(rest, &name).map_or("", |e| &rest[e..]);
            if let Some(gt) = rest.find('>') {
                rest = &rest[gt + 1..];
            }
            continue;
        }
        if BLOCKS.contains(&name.as_str()) && !out.ends_with('\n') {
            out.push('\n');
        } else if name == "td" || name == "th" {
            out.push(' ');
        }
    }
    out.push_str(&decode_entities(rest));
    // Whitespace inside a line is the browser's to collapse; so is it here.
    out.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}

/// Where `</name` (in any case) starts in `text`. ASCII only, so no case
/// change can move a byte offset, and each byte is looked at once or twice:
/// a page of many scripts costs its length, not its length squared.
fn find_closing(text: &str, name: &str) -> Option<usize> {
    let (bytes, name) = (text.as_bytes(), name.as_bytes());
    let mut from = 0;
    while let Some(at) = text[from..].find("</").map(|i| from + i) {
        let after = at + 2;
        if bytes.get(after..after + name.len()).is_some_and(|n| n.eq_ignore_ascii_case(name)) {
            return Some(at);
        }
        from = after;
    }
    None
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest.find(';').filter(|e| *e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            }
            .map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The most XML read from a Word document's text part, in bytes.
pub const MAX_DOCX_XML_BYTES: u64 = 32 * 1024 * 1024;
/// The most elements, texts and attributes its parser keeps (a real
/// document of `MAX_TEXT_BYTES` of text has well under a million).
pub const MAX_DOCX_NODES: u32 = 2_000_000;

/// The text of a Word document: each paragraph on a line, tabs and breaks kept.
pub fn docx_text(bytes: &[u8]) -> Result<String, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| "it is not a zip archive".to_string())?;
    let mut xml = String::new();
    {
        let mut part = archive.by_name("word/document.xml").map_err(|_| "it has no document part".to_string())?;
        if part.encrypted() {
            return Err("it is protected by a password".into());
        }
        // The part's own size is checked, not trusted: a small file that
        // unpacks to gigabytes stops at the limit.
        part.by_ref().take(MAX_DOCX_XML_BYTES + 1).read_to_string(&mut xml).map_err(|e| match e.kind() {
            // The reader's memory limit (`sandbox`), met while unpacking.
            std::io::ErrorKind::OutOfMemory => "it needs more memory to read than a document of its size should".to_string(),
            _ => "its text could not be unpacked".to_string(),
        })?;
        if xml.len() as u64 > MAX_DOCX_XML_BYTES {
            return Err("it unpacks to far more than its text".into());
        }
    }
    let options = roxmltree::ParsingOptions { nodes_limit: MAX_DOCX_NODES, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(&xml, options).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => "it unpacks to far more than its text".to_string(),
        _ => "its text is damaged".to_string(),
    })?;
    let mut out = String::new();
    for node in doc.descendants() {
        match node.tag_name().name() {
            "p" if node.is_element() => {
                if !out.is_empty() {
                    out.push('\n');
                }
            }
            "t" if node.is_element() => out.push_str(node.text().unwrap_or_default()),
            "tab" if node.is_element() => out.push('\t'),
            "br" | "cr" if node.is_element() => out.push('\n'),
            _ => {}
        }
    }
    Ok(out)
}

/// The text of a PDF, page after page; a password-protected or damaged file
/// is refused. The reader runs under `catch_unwind`: a malformed file that
/// makes it panic is refused as damaged, in words, rather than ending the
/// child process that reads it.
fn pdf_text(name: &str, bytes: &[u8]) -> Result<String, String> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(format!("“{name}” is not a PDF file, or it is damaged."));
    }
    if bytes.windows(8).any(|w| w == b"/Encrypt") {
        return Err(format!("“{name}” is protected by a password. Save a copy without the password and add that."));
    }
    if !pdf_streams_fit(bytes) {
        return Err(format!(
            "“{name}” could not be read safely: its pages unpack to far more than a PDF of its size should. Save it again as PDF, or add its text."
        ));
    }
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes));
    match pages {
        Ok(Ok(pages)) => Ok(pages.join("\n\n")),
        _ => Err(format!("“{name}” could not be read as a PDF: it may be damaged. Open it and save it again as PDF.")),
    }
}

/// The most one compressed PDF stream may unpack to, in bytes.
pub const MAX_PDF_STREAM_BYTES: u64 = 32 * 1024 * 1024;
/// The most all of a PDF's compressed streams may unpack to together.
pub const MAX_PDF_UNPACKED_BYTES: u64 = 128 * 1024 * 1024;
/// The most filters of one stream followed here (a real PDF has one or two).
const MAX_PDF_FILTER_LAYERS: usize = 6;

/// Whether every zlib-compressed stream of a PDF (images aside: the reader
/// never unpacks them) unpacks within the limits, each filter of a chain
/// counted. Unpacked into nothing, so this costs time, not memory. lopdf
/// unpacks without any limit; this is the cap in front of it, and the
/// reader's child process has a memory limit behind it for a stream this
/// scan does not see as the reader does. `false`: a limit passed.
pub fn pdf_streams_fit(bytes: &[u8]) -> bool {
    let mut total = 0u64;
    let mut from = 0;
    while let Some(at) = find(&bytes[from..], b"stream").map(|i| from + i) {
        from = at + 6;
        if at >= 3 && &bytes[at - 3..at] == b"end" {
            continue;
        }
        let data_start = match bytes.get(from..from + 2) {
            Some([b'\r', b'\n']) => from + 2,
            Some([b'\n', _]) | Some([b'\r', _]) => from + 1,
            _ => continue,
        };
        let data_end = find(&bytes[data_start..], b"endstream").map_or(bytes.len(), |i| data_start + i);
        if !looks_zlib(&bytes[data_start..data_end]) {
            from = data_end;
            continue;
        }
        let window = at.saturating_sub(4096);
        let dict_start = bytes[window..at].windows(3).rposition(|w| w == b"obj").map_or(window, |i| window + i);
        if find(&bytes[dict_start..at], b"/Image").is_some() {
            from = data_end;
            continue;
        }
        let data = &bytes[data_start..data_end];
        // A chain of filters unpacks layer after layer, and the reader keeps
        // each layer whole: every layer counts. Each is unpacked here
        // through the ones before it as a stream of readers, into nothing.
        let mut last_layer = false;
        for depth in 1..=MAX_PDF_FILTER_LAYERS {
            let budget = MAX_PDF_STREAM_BYTES.min(MAX_PDF_UNPACKED_BYTES - total);
            let mut reader: Box<dyn Read + '_> = Box::new(data);
            for _ in 0..depth {
                reader = Box::new(flate2::read::ZlibDecoder::new(reader));
            }
            let (counted, head) = count(reader.take(budget + 1));
            if counted > budget {
                return false;
            }
            total += counted;
            if !looks_zlib(&head) {
                last_layer = true;
                break;
            }
        }
        if !last_layer {
            return false;
        }
        from = data_end;
    }
    true
}

/// How many bytes `reader` gives (a damaged stream counts what came before
/// the damage), and its first two.
fn count(mut reader: impl Read) -> (u64, [u8; 2]) {
    let (mut counted, mut head, mut chunk) = (0u64, [0u8; 2], vec![0u8; 64 * 1024]);
    loop {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => return (counted, head),
            Ok(n) => {
                for (i, b) in chunk[..n].iter().enumerate().take(2usize.saturating_sub(counted as usize)) {
                    head[counted as usize + i] = *b;
                }
                counted += n as u64;
            }
        }
    }
}

fn looks_zlib(data: &[u8]) -> bool {
    matches!(data, [cmf, flg, ..] if cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_by_the_name() {
        assert_eq!(Kind::of("Chapter 5.PDF"), Some(Kind::Pdf));
        assert_eq!(Kind::of("notes.md"), Some(Kind::Markdown));
        assert_eq!(Kind::of("page.htm"), Some(Kind::Html));
        assert_eq!(Kind::of("essay.docx"), Some(Kind::Docx));
        assert_eq!(Kind::of("essay.doc"), None);
        assert_eq!(Kind::of("noext"), None);
        // Every ending the page's field offers is one the reader takes.
        for ending in crate::models::MATERIAL_ENDINGS.split(',') {
            assert!(Kind::of(&format!("file{ending}")).is_some(), "{ending}");
        }
        let e = text_of("photo.jpg", b"\xff\xd8").unwrap_err();
        assert!(e.contains(".txt, .md, .html, .docx or .pdf"), "{e}");
    }

    #[test]
    fn text_is_tidied() {
        let t = text_of("a.txt", b"\xEF\xBB\xBFOne  \r\nTwo\r\n\r\n\r\n\r\nThr\0ee\x0cFour\n").unwrap();
        assert_eq!(t, "One\nTwo\n\nThree\nFour");
        assert!(text_of("a.txt", b"\xff\xfe\x00").unwrap_err().contains("UTF-8"));
        assert!(text_of("a.txt", b"  \n ").unwrap_err().contains("no text"));
        assert!(text_of("a.txt", b"").unwrap_err().contains("empty"));
    }

    #[test]
    fn html_loses_its_markup_scripts_and_styles() {
        let html = "<html><head><style>p { color: red }</style><script>alert('x<p>')</script></head><body>\
            <h1>Rivers</h1><!-- a note --><p>Water &amp; rock, &lt;3 &#233;&#x41;</p><ul><li>One</li><li>Two</li></ul>\
            <table><tr><td>a</td><td>b</td></tr></table></body></html>";
        assert_eq!(text_of("r.html", html.as_bytes()).unwrap(), "Rivers\nWater & rock, <3 éA\nOne\nTwo\na b");
    }

    #[test]
    fn oversized_files_are_refused_before_reading() {
        let big = vec![b'a'; MAX_FILE_BYTES + 1];
        assert!(text_of("big.txt", &big).unwrap_err().contains("larger than 10 MB"));
    }
}
