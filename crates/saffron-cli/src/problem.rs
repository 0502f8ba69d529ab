//! A problem as every command reports it: `file:line:column: severity: message` and a hint
//! line in text, one object in JSON; and the exit code a list of them gives.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use saffron_syntax::Location;
use serde::Serialize;

use crate::terminal::escape_controls;

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub severity: &'static str,
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
    /// The file could not be read at all: Saffron could not do its job (exit 2), which is not
    /// a verdict on what the file says.
    #[serde(skip)]
    pub unreadable: bool,
}

impl Problem {
    pub fn error(file: &Path, location: Location, code: &str, message: impl Into<String>) -> Problem {
        Problem {
            file: file.display().to_string(),
            line: location.line,
            column: location.column,
            severity: "error",
            code: code.to_string(),
            message: message.into(),
            hint: None,
            unreadable: false,
        }
    }

    pub fn warning(file: &Path, location: Location, code: &str, message: impl Into<String>) -> Problem {
        Problem { severity: "warning", ..Problem::error(file, location, code, message) }
    }

    /// A file that could not be read (permissions, a folder where a file was expected...).
    pub fn unreadable(file: &Path, error: &io::Error) -> Problem {
        Problem {
            hint: Some("check that the file exists and that you may read it".to_string()),
            unreadable: true,
            ..Problem::error(
                file,
                Location { line: 1, column: 1 },
                "unreadable-file",
                format!("cannot be read: {error}"),
            )
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Problem {
        self.hint = Some(hint.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == "error"
    }

    /// The text form; text from the user's files is escaped for the terminal.
    pub fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let line = format!("{}:{}:{}: {}: {}", self.file, self.line, self.column, self.severity, self.message);
        writeln!(out, "{}", escape_controls(&line))?;
        if let Some(hint) = &self.hint {
            writeln!(out, "  hint: {}", escape_controls(hint))?;
        }
        Ok(())
    }
}

/// The exit code of a command that found `problems`, as docs/cli.md gives it: 2 when a file
/// could not be read, 1 when a file has errors, 0 otherwise.
pub fn exit_code(problems: &[Problem]) -> ExitCode {
    if problems.iter().any(|problem| problem.unreadable) {
        ExitCode::from(2)
    } else if problems.iter().any(Problem::is_error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
