//! Byte offsets (what every collc span holds) to and from LSP positions (line and
//! UTF-16 code unit, what clients count by default). `\n`, `\r\n` and a lone `\r`
//! each end a line, as the protocol says.

use collc_grammar::Span;
use lsp_types::{Position, Range};

/// The line starts of one text.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, b) in bytes.iter().enumerate() {
            let ends_line = *b == b'\n' || (*b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            if ends_line {
                starts.push(i + 1);
            }
        }
        LineIndex { text, starts }
    }

    /// The position of a byte offset (clamped to the text, rounded down to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let offset = collc_grammar::diag::floor_char_boundary(self.text, offset);
        let line = self.starts.partition_point(|s| *s <= offset) - 1;
        let start = self.starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(to_u32(line), to_u32(character))
    }

    /// The range of a span.
    pub fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of a position: a line past the end is the end of the
    /// text, a character past the end of its line is the line's end.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .copied()
            .unwrap_or(self.text.len());
        let line = self.text[start..end].trim_end_matches(['\n', '\r']);
        let mut units = 0usize;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + line.len()
    }

    /// The position just past the text's end.
    pub fn end(&self) -> Position {
        self.position(self.text.len())
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_and_line_endings() {
        let text = "a\r\nµ𝄞x\rz\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(0), Position::new(0, 0));
        assert_eq!(idx.position(3), Position::new(1, 0));
        // µ is 2 bytes / 1 unit, 𝄞 is 4 bytes / 2 units.
        let x = text.find('x').unwrap_or_default();
        assert_eq!(idx.position(x), Position::new(1, 3));
        let z = text.find('z').unwrap_or_default();
        assert_eq!(idx.position(z), Position::new(2, 0));
        assert_eq!(idx.offset(Position::new(1, 3)), x);
        assert_eq!(idx.offset(Position::new(1, 99)), x + 1);
        assert_eq!(idx.offset(Position::new(9, 0)), text.len());
        // Inside a multi-byte character rounds down.
        assert_eq!(idx.position(x - 1), Position::new(1, 1));
        assert_eq!(idx.end(), Position::new(3, 0));
    }
}
