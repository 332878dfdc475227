//! Parts of a zip archive (a QTI package, a cartridge, a .docx) read as
//! text, never past a limit: an archive can claim a part unpacks to
//! anything, so a crafted one costs its sender a refusal and the server
//! only the limit. A whole archive is read under one budget (`Budgeted`):
//! each part once, however often the package names it, and all of them
//! together to a stated size, so a small package that names one big part a
//! hundred times costs what the part costs. Each format says in its own
//! sentence what went wrong.

use std::{
    collections::HashSet,
    io::{Cursor, Read},
};

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
    /// The part was read already (`Budgeted` reads each part once).
    Again,
    /// The archive's budget is spent: its parts together unpack to more
    /// than it allows, or it names more parts than it allows.
    Spent,
}

/// An archive read under one budget for the whole of it.
pub struct Budgeted<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    /// The most one part is read to.
    part_limit: u64,
    /// Bytes the rest of the parts may still unpack to.
    bytes_left: u64,
    /// Parts that may still be read.
    reads_left: usize,
    read: HashSet<String>,
}

impl<'a> Budgeted<'a> {
    /// `zip` read to `part_limit` bytes a part, `total` bytes in all, in at
    /// most `reads` parts.
    pub fn new(zip: zip::ZipArchive<Cursor<&'a [u8]>>, part_limit: u64, total: u64, reads: usize) -> Self {
        Self { zip, part_limit, bytes_left: total, reads_left: reads, read: HashSet::new() }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.zip.file_names()
    }

    /// The part `name` as text, the first time it is asked for (`Again`
    /// after); `Spent` once the archive's budget is.
    pub fn part(&mut self, name: &str) -> Result<String, PartError> {
        if self.read.contains(name) {
            return Err(PartError::Again);
        }
        if self.reads_left == 0 {
            return Err(PartError::Spent);
        }
        self.reads_left -= 1;
        self.read.insert(name.to_string());
        let limit = self.part_limit.min(self.bytes_left);
        let text = part(&mut self.zip, name, limit);
        match &text {
            Ok(t) => self.bytes_left -= t.len() as u64,
            // Past what is left of the budget, though not past a part's own limit.
            Err(PartError::TooLarge) if limit < self.part_limit => return Err(PartError::Spent),
            Err(_) => {}
        }
        text
    }
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

    #[test]
    fn a_budgeted_archive_reads_each_part_once_and_stops_at_its_budget() {
        let bytes = archive(&[("a.xml", &[b'a'; 600]), ("b.xml", &[b'b'; 600]), ("c.xml", b"<c/>"), ("d.xml", b"<d/>")]);
        let open = || zip::ZipArchive::new(Cursor::new(bytes.as_slice())).unwrap();
        let mut whole = Budgeted::new(open(), 1024, 1000, 10);
        assert_eq!(whole.part("a.xml").map(|t| t.len()), Ok(600));
        assert_eq!(whole.part("a.xml"), Err(PartError::Again), "a part named twice is read once");
        assert_eq!(whole.part("b.xml"), Err(PartError::Spent), "600 + 600 is past the 1000 bytes of the whole");
        let mut few = Budgeted::new(open(), 1024, 1_000_000, 2);
        assert!(few.part("c.xml").is_ok() && few.part("nowhere.xml") == Err(PartError::Missing));
        assert_eq!(few.part("d.xml"), Err(PartError::Spent), "two reads allowed, and a missing part counts");
        let mut small = Budgeted::new(open(), 100, 1_000_000, 10);
        assert_eq!(small.part("a.xml"), Err(PartError::TooLarge), "a part over its own limit is too large, not the budget");
    }
}
