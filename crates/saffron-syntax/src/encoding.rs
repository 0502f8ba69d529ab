//! Feature files are UTF-8; one that is not is reported at its first bad byte.

use std::fmt;

use crate::ast::Location;

/// Where a file stops being UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    /// Byte offset of the first byte that starts no valid UTF-8 character.
    pub offset: usize,
    /// The same place as a line and column (the column counts the characters before it, as
    /// every other location does).
    pub location: Location,
}

impl fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not UTF-8: the byte at offset {} starts no valid UTF-8 character", self.offset)
    }
}

impl NotUtf8 {
    pub const HINT: &'static str =
        "feature files are read as UTF-8: save the file as UTF-8 (for example `iconv -f latin1 -t utf-8`)";
}

/// The file's text, or where it stops being UTF-8.
pub fn decode_source(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|error| {
        let offset = error.utf8_error().valid_up_to();
        // Everything before the bad byte is valid, so lines and columns count characters.
        let valid = std::str::from_utf8(&error.as_bytes()[..offset]).unwrap_or_default();
        let line_start = valid.rfind('\n').map_or(0, |newline| newline + 1);
        let line = valid.matches('\n').count() + 1;
        let column = valid[line_start..].chars().count() + 1;
        NotUtf8 { offset, location: Location { line: line as u32, column: column as u32 } }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bad_byte_is_located_by_line_and_character_column() {
        assert_eq!(decode_source(b"Feature: \xc3\xa9\n".to_vec()), Ok("Feature: é\n".to_string()));
        let problem = decode_source(b"Feature: A\n  Scenario: caf\xc3\xa9 \xe9t\xe9\n".to_vec()).expect_err("latin-1");
        assert_eq!(problem.offset, 29);
        assert_eq!(problem.location, Location { line: 2, column: 18 });
        assert_eq!(decode_source(vec![0xff]).expect_err("bad").location, Location { line: 1, column: 1 });
    }
}
