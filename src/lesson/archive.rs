//! One part of a zip archive (a QTI package, a cartridge, a .docx) read as
//! text, never past a limit: an archive can claim a part unpacks to
//! anything, so a crafted one costs its sender a refusal and the server
//! only the limit. Each format says in its own sentence what went wrong.

use std::io::{Cursor, Read};

/// Why a part could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum PartError {
    /// The archive has no part of that name.
    Missing,
    /// The part does not unpack.
    Unreadable,
    /// The part unpacks to more than the limit.
    TooLarge,
    /// The part is not UTF-8 text.
    NotText,
}

/// The part `name` of `zip` as text, read to `limit` bytes at most.
pub fn part(zip: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str, limit: u64) -> Result<String, PartError> {
    let entry = zip.by_name(name).map_err(|_| PartError::Missing)?;
    let mut bytes = Vec::new();
    let read = entry.take(limit + 1).read_to_end(&mut bytes).map_err(|_| PartError::Unreadable)?;
    if read as u64 > limit {
        return Err(PartError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| PartError::NotText)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn archive(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, bytes) in files {
            out.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
            out.write_all(bytes).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    #[test]
    fn a_part_is_read_to_its_limit_and_no_further() {
        let bytes = archive(&[("a.xml", b"<a/>"), ("big.xml", &[b'x'; 2048]), ("latin1.txt", &[0xe9])]);
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes.as_slice())).unwrap();
        assert_eq!(part(&mut zip, "a.xml", 1024), Ok("<a/>".to_string()));
        assert_eq!(part(&mut zip, "big.xml", 1024), Err(PartError::TooLarge));
        assert_eq!(part(&mut zip, "big.xml", 2048).map(|t| t.len()), Ok(2048));
        assert_eq!(part(&mut zip, "none.xml", 1024), Err(PartError::Missing));
        assert_eq!(part(&mut zip, "latin1.txt", 1024), Err(PartError::NotText));
    }
}
