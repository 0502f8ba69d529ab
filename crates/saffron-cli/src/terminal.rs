//! Text from the user's files on its way to a terminal, and the lines a command writes there.

use std::borrow::Cow;

/// `println!` for a command that must end cleanly when its output is closed under it
/// (`saffron run | head -1`): a line that cannot be written is dropped, never a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `eprintln!`, as [`out!`] is `println!`.
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) use {err, out};

/// `text` with every control character (C0, DEL, C1) written as a `\u{..}` escape. A feature
/// file is data, not terminal input: an ESC sequence in a step must not recolour, retitle or
/// clear the user's terminal, and a NUL or a line break must not split a diagnostic's line.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if character.is_control() {
            escaped.extend(character.escape_unicode());
        } else {
            escaped.push(character);
        }
    }
    Cow::Owned(escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_is_kept() {
        assert_eq!(escape_controls("I see \"café\" ✓"), "I see \"café\" ✓");
        assert_eq!(
            escape_controls("a\u{1b}[2Jb\0c\u{7f}d\u{9b}e\tf\ng"),
            "a\\u{1b}[2Jb\\u{0}c\\u{7f}d\\u{9b}e\\u{9}f\\u{a}g"
        );
    }
}
