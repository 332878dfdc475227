//! Small files of each kind a teacher may add as material, written by the
//! tests themselves: a Word document (a zip archive of XML) and PDFs with
//! real text, no text (as a scan), a password, or damage.
#![allow(dead_code)]

use std::io::{Cursor, Write};

/// A .docx whose paragraphs are `paragraphs` (a tab inside one is kept).
pub fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|p| {
            let runs: Vec<String> = p.split('\t').map(|t| format!("<w:r><w:t xml:space=\"preserve\">{}</w:t></w:r>", escape(t))).collect();
            format!("<w:p>{}</w:p>", runs.join("<w:r><w:tab/></w:r>"))
        })
        .collect();
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}</w:body></w:document>"
    );
    zip_of(&[
        ("[Content_Types].xml", "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>"),
        ("word/document.xml", &document),
    ])
}

/// A zip archive of `parts`, compressed as Word compresses them.
pub fn zip_of(parts: &[(&str, &str)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in parts {
        zip.start_file(*name, options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A PDF with one page per entry of `pages`, each line of it drawn as text
/// in Helvetica. An empty page has nothing drawn (as a scanned page has no text).
pub fn pdf(pages: &[&str]) -> Vec<u8> {
    pdf_with(pages, "")
}

/// The same, encrypted as far as its trailer says.
pub fn pdf_with_password(pages: &[&str]) -> Vec<u8> {
    pdf_with(pages, " /Encrypt << /Filter /Standard /V 1 /R 2 /O (x) /U (y) /P -4 >>")
}

fn pdf_with(pages: &[&str], trailer_extra: &str) -> Vec<u8> {
    // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content for each page.
    let mut objects: Vec<String> = Vec::new();
    let kids: Vec<String> = (0..pages.len()).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".into());
    objects.push(format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), pages.len()));
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into());
    for (i, page) in pages.iter().enumerate() {
        let mut content = String::new();
        if !page.is_empty() {
            content.push_str("BT /F1 12 Tf 72 720 Td 16 TL\n");
            for line in page.lines() {
                let line = line.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
                content.push_str(&format!("({line}) Tj T*\n"));
            }
            content.push_str("ET\n");
        } else {
            content.push_str("q 0.9 g 72 72 400 600 re f Q\n");
        }
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R /Resources << /Font << /F1 3 0 R >> >> >>",
            5 + 2 * i
        ));
        objects.push(format!("<< /Length {} >>\nstream\n{content}endstream", content.len()));
    }
    pdf_objects(&objects, trailer_extra)
}

// ---- hostile files: each made to cost a reader far more than its size ----

/// A PDF whose catalog holds arrays nested `depth` deep: a reader that
/// follows nesting by recursion runs out of stack.
pub fn pdf_nested(depth: usize) -> Vec<u8> {
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    pdf_objects(&[format!("<< /Type /Catalog /Pages 2 0 R /Deep {nested} >>"), "<< /Type /Pages /Kids [] /Count 0 >>".into()], "")
}

/// A one-page PDF whose content stream is `zeros` zero bytes compressed
/// `layers` times over, each layer named in its filter list: a few
/// kilobytes that a reader without limits unpacks in full.
pub fn pdf_flate_bomb(zeros: usize, layers: usize) -> Vec<u8> {
    use flate2::{write::ZlibEncoder, Compression};
    let mut data = vec![0u8; zeros];
    for _ in 0..layers {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::best());
        e.write_all(&data).unwrap();
        data = e.finish().unwrap();
    }
    let filters = vec!["/FlateDecode"; layers].join(" ");
    let mut content = format!("<< /Length {} /Filter [{filters}] >>\nstream\n", data.len()).into_bytes();
    content.extend_from_slice(&data);
    content.extend_from_slice(b"\nendstream");
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".to_vec(),
        content,
    ];
    pdf_raw(&objects, "")
}

/// A .docx whose text part is `xml_bytes` of empty paragraphs (it packs to
/// a thousandth of that).
pub fn docx_bomb(xml_bytes: usize) -> Vec<u8> {
    let body = "<w:p/>".repeat(xml_bytes / 6);
    let document = format!("<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}</w:body></w:document>");
    zip_of(&[("word/document.xml", &document)])
}

fn pdf_objects(objects: &[String], trailer_extra: &str) -> Vec<u8> {
    let raw: Vec<Vec<u8>> = objects.iter().map(|o| o.as_bytes().to_vec()).collect();
    pdf_raw(&raw, trailer_extra)
}

fn pdf_raw(objects: &[Vec<u8>], trailer_extra: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(format!("trailer\n<< /Size {} /Root 1 0 R{trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes());
    out
}

/// A QTI 2.1 item of one multiple choice question, padded with spaces to
/// about `bytes`.
pub fn qti_item(bytes: usize) -> String {
    let item = r#"<assessmentItem identifier="one" title="One"><responseDeclaration identifier="R" cardinality="single"><correctResponse><value>A</value></correctResponse></responseDeclaration><itemBody><choiceInteraction responseIdentifier="R" maxChoices="1"><prompt>Pick</prompt><simpleChoice identifier="A">Yes</simpleChoice><simpleChoice identifier="B">No</simpleChoice></choiceInteraction></itemBody>PAD</assessmentItem>"#;
    item.replace("PAD", &" ".repeat(bytes.saturating_sub(item.len())))
}

/// A QTI package whose test names one item of `item_bytes` `times` times
/// (each reference once unpacked and kept its own copy).
pub fn qti_one_part_named(times: usize, item_bytes: usize) -> Vec<u8> {
    let refs: String = (0..times).map(|i| format!(r#"<assessmentItemRef identifier="r{i}" href="item.xml"/>"#)).collect();
    let test = format!(r#"<assessmentTest identifier="t" title="Repeats"><testPart identifier="p"><assessmentSection identifier="s" title="S">{refs}</assessmentSection></testPart></assessmentTest>"#);
    let manifest = r#"<manifest><resources><resource identifier="t" type="imsqti_test_xmlv2p1" href="test.xml"/></resources></manifest>"#;
    zip_of(&[("imsmanifest.xml", manifest), ("test.xml", &test), ("item.xml", &qti_item(item_bytes))])
}

/// A QTI 1.2 quiz of `items` multiple choice questions.
pub fn classic_quiz(items: usize) -> String {
    let items: String = (0..items)
        .map(|i| {
            format!(
                r#"<item ident="q{i}" title="Q{i}"><itemmetadata><qtimetadata><qtimetadatafield><fieldlabel>cc_profile</fieldlabel><fieldentry>cc.multiple_choice.v0p1</fieldentry></qtimetadatafield></qtimetadata></itemmetadata><presentation><material><mattext texttype="text/plain">Question {i}</mattext></material><response_lid ident="r" rcardinality="Single"><render_choice><response_label ident="a{i}"><material><mattext>Yes</mattext></material></response_label><response_label ident="b{i}"><material><mattext>No</mattext></material></response_label></render_choice></response_lid></presentation><resprocessing><respcondition continue="No"><conditionvar><varequal respident="r">a{i}</varequal></conditionvar><setvar action="Set" varname="SCORE">100</setvar></respcondition></resprocessing></item>"#
            )
        })
        .collect();
    format!(r#"<questestinterop xmlns="http://www.imsglobal.org/xsd/ims_qtiasiv1p2"><assessment ident="a" title="Quiz"><section ident="s">{items}</section></assessment></questestinterop>"#)
}

/// A cartridge whose manifest lists one quiz of `items` questions `times`
/// times (the item cap once restarted for each listing).
pub fn qti_quiz_listed(times: usize, items: usize) -> Vec<u8> {
    let resources: String = (0..times).map(|i| format!(r#"<resource identifier="r{i}" type="imsqti_xmlv1p2/imscc_xmlv1p1/assessment"><file href="quiz.xml"/></resource>"#)).collect();
    let manifest = format!("<manifest><resources>{resources}</resources></manifest>");
    zip_of(&[("imsmanifest.xml", &manifest), ("quiz.xml", &classic_quiz(items))])
}

/// A package of `parts` distinct quizzes of one question, each padded to
/// about `each_bytes`: together past any package's budget, each under a
/// part's limit.
pub fn qti_over_budget(parts: usize, each_bytes: usize) -> Vec<u8> {
    let names: Vec<String> = (0..parts).map(|i| format!("quiz{i}.xml")).collect();
    let resources: String = names.iter().enumerate().map(|(i, h)| format!(r#"<resource identifier="r{i}" type="imsqti_xmlv1p2/imscc_xmlv1p1/assessment"><file href="{h}"/></resource>"#)).collect();
    let manifest = format!("<manifest><resources>{resources}</resources></manifest>");
    let quiz = classic_quiz(1);
    let padded = format!("{quiz}{}", " ".repeat(each_bytes.saturating_sub(quiz.len())));
    let mut files: Vec<(&str, &str)> = vec![("imsmanifest.xml", &manifest)];
    files.extend(names.iter().map(|n| (n.as_str(), padded.as_str())));
    zip_of(&files)
}

/// A "worksheet" made to look like Margin's, whose text part is
/// `xml_bytes` of empty paragraphs.
pub fn worksheet_bomb(xml_bytes: usize) -> Vec<u8> {
    let body = "<w:p/>".repeat(xml_bytes / 6);
    let document = format!("<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}</w:body></w:document>");
    zip_of(&[("customXml/item1.xml", r#"<marginWorksheet ref="guess"/>"#), ("word/document.xml", &document)])
}
