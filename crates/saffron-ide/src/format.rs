//! Formatting: two-space indentation by nesting, table columns aligned, trailing whitespace
//! dropped; comments, blank lines, descriptions and doc string content kept as written
//! (re-indented with their block). A file with syntax errors is left alone: guessing the
//! structure of a broken file could move text.

use std::collections::HashMap;

use saffron_syntax::{Background, DocString, Document, Examples, FeatureChild, RuleChild, Scenario, Step, TableRow};

const INDENT: usize = 2;

#[derive(Debug, Clone)]
enum LineRole {
    /// Indent and trim.
    At(usize),
    /// A table row: indent, and the table it belongs to.
    Row(usize, usize),
    /// Doc string content: the new indent and the opening delimiter's old indent.
    DocContent(usize, usize),
    /// Description text: the new indent for the first line's indentation.
    Description(usize, usize),
}

struct Plan<'a> {
    roles: HashMap<u32, LineRole>,
    tables: Vec<Vec<&'a TableRow>>,
}

impl<'a> Plan<'a> {
    fn at(&mut self, line: u32, indent: usize) {
        self.roles.insert(line, LineRole::At(indent));
    }

    fn table(&mut self, rows: impl IntoIterator<Item = &'a TableRow>, indent: usize) {
        let rows: Vec<&TableRow> = rows.into_iter().collect();
        if rows.is_empty() {
            return;
        }
        let id = self.tables.len();
        for row in &rows {
            self.roles.insert(row.location.line, LineRole::Row(indent, id));
        }
        self.tables.push(rows);
    }

    fn description(&mut self, text: &str, description: &saffron_syntax::Description, indent: usize) {
        let Some(span) = description.span else { return };
        let first_line = line_of(text, span.start);
        let last_line = line_of(text, span.end);
        let first_indent = column_of(text, span.start);
        for line in first_line..=last_line {
            self.roles.entry(line).or_insert(LineRole::Description(indent, first_indent));
        }
    }

    fn steps(&mut self, text: &str, steps: &'a [Step], indent: usize) {
        for step in steps {
            self.at(step.location.line, indent);
            if let Some(table) = &step.data_table {
                self.table(&table.rows, indent + INDENT);
            }
            if let Some(doc) = &step.doc_string {
                self.doc_string(text, doc, indent + INDENT);
            }
        }
    }

    fn doc_string(&mut self, text: &str, doc: &DocString, indent: usize) {
        let open = doc.location.line;
        let close = line_of(text, doc.span.end);
        self.at(open, indent);
        for line in open + 1..close {
            self.roles.insert(line, LineRole::DocContent(indent, doc.location.column as usize - 1));
        }
        if close > open {
            self.at(close, indent);
        }
    }

    fn tags(&mut self, tags: &[saffron_syntax::Tag], indent: usize) {
        for tag in tags {
            self.at(tag.location.line, indent);
        }
    }

    fn background(&mut self, text: &str, background: &'a Background, indent: usize) {
        self.at(background.header.location.line, indent);
        self.description(text, &background.description, indent + INDENT);
        self.steps(text, &background.steps, indent + INDENT);
    }

    fn scenario(&mut self, text: &str, scenario: &'a Scenario, indent: usize) {
        self.tags(&scenario.tags, indent);
        self.at(scenario.header.location.line, indent);
        self.description(text, &scenario.description, indent + INDENT);
        self.steps(text, &scenario.steps, indent + INDENT);
        for examples in &scenario.examples {
            self.examples(text, examples, indent + INDENT);
        }
    }

    fn examples(&mut self, text: &str, examples: &'a Examples, indent: usize) {
        self.tags(&examples.tags, indent);
        self.at(examples.header.location.line, indent);
        self.description(text, &examples.description, indent + INDENT);
        self.table(examples.table_header.iter().chain(&examples.table_body), indent + INDENT);
    }
}

fn line_of(text: &str, offset: usize) -> u32 {
    text[..offset.min(text.len())].matches('\n').count() as u32 + 1
}

fn column_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    text[start..offset].chars().count()
}

/// The formatted text, or `None` when the file has syntax errors.
pub fn format(text: &str, document: &Document, has_errors: bool) -> Option<String> {
    if has_errors {
        return None;
    }
    let mut plan = Plan { roles: HashMap::new(), tables: Vec::new() };
    if let Some(header) = &document.language_header {
        plan.at(header.location.line, 0);
    }
    if let Some(feature) = &document.feature {
        plan.tags(&feature.tags, 0);
        plan.at(feature.header.location.line, 0);
        plan.description(text, &feature.description, INDENT);
        for child in &feature.children {
            match child {
                FeatureChild::Background(background) => plan.background(text, background, INDENT),
                FeatureChild::Scenario(scenario) => plan.scenario(text, scenario, INDENT),
                FeatureChild::Rule(rule) => {
                    plan.tags(&rule.tags, INDENT);
                    plan.at(rule.header.location.line, INDENT);
                    plan.description(text, &rule.description, 2 * INDENT);
                    for child in &rule.children {
                        match child {
                            RuleChild::Background(background) => plan.background(text, background, 2 * INDENT),
                            RuleChild::Scenario(scenario) => plan.scenario(text, scenario, 2 * INDENT),
                        }
                    }
                }
            }
        }
    }
    let widths: Vec<Vec<usize>> = plan
        .tables
        .iter()
        .map(|rows| {
            let columns = rows.iter().map(|row| row.cells.len()).max().unwrap_or(0);
            (0..columns)
                .map(|column| {
                    rows.iter()
                        .filter_map(|row| row.cells.get(column))
                        .map(|cell| text[cell.span.start..cell.span.end].chars().count())
                        .max()
                        .unwrap_or(0)
                })
                .collect()
        })
        .collect();

    let lines: Vec<&str> = text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect();
    let line_ending = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (index, raw) in lines.iter().enumerate() {
        let number = index as u32 + 1;
        let trimmed = raw.trim();
        let formatted = match plan.roles.get(&number) {
            Some(LineRole::At(indent)) => format!("{}{trimmed}", " ".repeat(*indent)),
            Some(LineRole::Row(indent, table)) => {
                let row = plan.tables[*table].iter().find(|row| row.location.line == number);
                match row {
                    Some(row) => {
                        let cells: Vec<String> = row
                            .cells
                            .iter()
                            .enumerate()
                            .map(|(column, cell)| {
                                let value = &text[cell.span.start..cell.span.end];
                                let width = widths[*table].get(column).copied().unwrap_or(0);
                                format!("{value}{}", " ".repeat(width.saturating_sub(value.chars().count())))
                            })
                            .collect();
                        format!("{}| {} |", " ".repeat(*indent), cells.join(" | "))
                    }
                    None => format!("{}{trimmed}", " ".repeat(*indent)),
                }
            }
            Some(LineRole::DocContent(indent, old_indent)) => {
                let leading = raw.chars().take_while(|c| c.is_whitespace()).count();
                if raw.trim().is_empty() {
                    String::new()
                } else if leading >= *old_indent {
                    let rest: String = raw.chars().skip(*old_indent).collect();
                    format!("{}{}", " ".repeat(*indent), rest.trim_end())
                } else {
                    format!("{}{}", " ".repeat(*indent), raw.trim())
                }
            }
            Some(LineRole::Description(indent, first_indent)) => {
                let leading = raw.chars().take_while(|c| c.is_whitespace()).count();
                if trimmed.is_empty() {
                    String::new()
                } else {
                    let extra = leading.saturating_sub(*first_indent);
                    format!("{}{trimmed}", " ".repeat(indent + extra))
                }
            }
            None if trimmed.starts_with('#') => {
                // A comment takes the indentation of the next line that has one.
                let next = (number + 1..=lines.len() as u32).find_map(|n| match plan.roles.get(&n) {
                    Some(LineRole::At(indent) | LineRole::Row(indent, _)) => Some(*indent),
                    Some(LineRole::Description(indent, _)) => Some(*indent),
                    _ => None,
                });
                format!("{}{trimmed}", " ".repeat(next.unwrap_or(0)))
            }
            None => trimmed.to_string(),
        };
        out.push(formatted);
    }
    while out.len() > 1 && out.last().is_some_and(|line| line.is_empty()) {
        out.pop();
    }
    let mut result = out.join(line_ending);
    result.push_str(line_ending);
    Some(result)
}
