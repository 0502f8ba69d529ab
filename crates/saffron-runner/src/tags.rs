//! Cucumber tag expressions: `@smoke and not (@wip or @slow)`.
//!
//! `not` binds tighter than `and`, which binds tighter than `or`; parentheses group; a tag is
//! `@` followed by anything but whitespace and parentheses (`\(`, `\)` and `\\` escape them).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagExpression {
    Tag(String),
    Not(Box<TagExpression>),
    And(Box<TagExpression>, Box<TagExpression>),
    Or(Box<TagExpression>, Box<TagExpression>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagExpressionError {
    pub message: String,
    /// 1-based column in the expression.
    pub column: usize,
}

impl fmt::Display for TagExpressionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tag expression, column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for TagExpressionError {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Tag(String),
    And,
    Or,
    Not,
    Open,
    Close,
}

fn lex(text: &str) -> Result<Vec<(Token, usize)>, TagExpressionError> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        let column = index + 1;
        if c.is_whitespace() {
            index += 1;
        } else if c == '(' || c == ')' {
            tokens.push((if c == '(' { Token::Open } else { Token::Close }, column));
            index += 1;
        } else {
            let mut word = String::new();
            while index < chars.len() && !chars[index].is_whitespace() && chars[index] != '(' && chars[index] != ')' {
                if chars[index] == '\\' {
                    match chars.get(index + 1) {
                        Some(escaped @ ('(' | ')' | '\\' | ' ')) => {
                            word.push(*escaped);
                            index += 2;
                            continue;
                        }
                        _ => {
                            return Err(TagExpressionError {
                                message: "a backslash escapes only '(', ')', '\\' or a space".into(),
                                column: index + 1,
                            });
                        }
                    }
                }
                word.push(chars[index]);
                index += 1;
            }
            let token = match word.as_str() {
                "and" => Token::And,
                "or" => Token::Or,
                "not" => Token::Not,
                tag if tag.starts_with('@') && tag.len() > 1 => Token::Tag(word),
                other => {
                    return Err(TagExpressionError {
                        message: format!("'{other}' is not a tag: tags start with @ (operators are and, or, not)"),
                        column,
                    });
                }
            };
            tokens.push((token, column));
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    position: usize,
    end_column: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.position).map(|(token, _)| token)
    }

    fn column(&self) -> usize {
        self.tokens.get(self.position).map_or(self.end_column, |(_, column)| *column)
    }

    fn error(&self, message: &str) -> TagExpressionError {
        TagExpressionError { message: message.to_string(), column: self.column() }
    }

    fn or(&mut self) -> Result<TagExpression, TagExpressionError> {
        let mut left = self.and()?;
        while self.peek() == Some(&Token::Or) {
            self.position += 1;
            let right = self.and()?;
            left = TagExpression::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<TagExpression, TagExpressionError> {
        let mut left = self.not()?;
        while self.peek() == Some(&Token::And) {
            self.position += 1;
            let right = self.not()?;
            left = TagExpression::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<TagExpression, TagExpressionError> {
        if self.peek() == Some(&Token::Not) {
            self.position += 1;
            return Ok(TagExpression::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<TagExpression, TagExpressionError> {
        match self.peek().cloned() {
            Some(Token::Tag(tag)) => {
                self.position += 1;
                Ok(TagExpression::Tag(tag))
            }
            Some(Token::Open) => {
                self.position += 1;
                let inner = self.or()?;
                if self.peek() != Some(&Token::Close) {
                    return Err(self.error("expected ')'"));
                }
                self.position += 1;
                Ok(inner)
            }
            Some(Token::Close) => Err(self.error("unexpected ')'")),
            Some(Token::And | Token::Or) => Err(self.error("expected a tag, 'not' or '(' before this operator")),
            Some(Token::Not) => Err(self.error("expected a tag")),
            None => Err(self.error("the expression ends too early: expected a tag")),
        }
    }
}

impl TagExpression {
    pub fn parse(text: &str) -> Result<TagExpression, TagExpressionError> {
        let tokens = lex(text)?;
        let mut parser = Parser { tokens, position: 0, end_column: text.chars().count() + 1 };
        let expression = parser.or()?;
        if parser.position < parser.tokens.len() {
            return Err(parser.error("expected 'and' or 'or' here"));
        }
        Ok(expression)
    }

    /// Whether a scenario with these tags (each with its `@`) is selected.
    pub fn matches<S: AsRef<str>>(&self, tags: &[S]) -> bool {
        match self {
            TagExpression::Tag(tag) => tags.iter().any(|t| t.as_ref() == tag),
            TagExpression::Not(inner) => !inner.matches(tags),
            TagExpression::And(left, right) => left.matches(tags) && right.matches(tags),
            TagExpression::Or(left, right) => left.matches(tags) || right.matches(tags),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selects(expression: &str, tags: &[&str]) -> bool {
        TagExpression::parse(expression).expect("valid").matches(tags)
    }

    #[test]
    fn precedence_and_grouping() {
        assert!(selects("@a or @b and @c", &["@a"]));
        assert!(!selects("(@a or @b) and @c", &["@a"]));
        assert!(selects("not @wip", &["@orders"]));
        assert!(!selects("not @wip", &["@wip"]));
        assert!(selects("@orders and not (@wip or @slow)", &["@orders"]));
        assert!(!selects("@orders and not (@wip or @slow)", &["@orders", "@slow"]));
        assert!(selects("not not @a", &["@a"]));
        assert!(selects(r"@with\(paren\)", &["@with(paren)"]));
    }

    #[test]
    fn errors_name_the_column() {
        let error = |text| TagExpression::parse(text).expect_err("invalid");
        assert_eq!(error("@a and").column, 7);
        assert_eq!(error("@a @b").message, "expected 'and' or 'or' here");
        assert_eq!(error("(@a").message, "expected ')'");
        assert!(error("wip").message.contains("tags start with @"));
        assert_eq!(error("or @a").column, 1);
    }
}
