//! Masking secret values out of text on its way to a person, a model or a file.

use crate::resolve::Secret;

/// Replaces every occurrence of a known secret value by its `{env:NAME}` token.
///
/// Values shorter than [`Masker::MIN_LEN`] characters are not masked: masking `1` or `ok`
/// would shred every report while protecting nothing worth protecting. Transformed spellings
/// (upper-cased, URL-encoded) are not recognized either.
#[derive(Clone, Default)]
pub struct Masker {
    // Longest first, so a secret containing another secret is masked whole.
    secrets: Vec<(String, String)>,
}

impl Masker {
    /// The shortest value, in characters, that is masked.
    pub const MIN_LEN: usize = 3;

    /// A masker with no secrets.
    pub fn new() -> Masker {
        Masker::default()
    }

    /// Mask `secret` from now on. Adding a value twice keeps its first name.
    pub fn add(&mut self, secret: &Secret) {
        if secret.value.chars().count() < Masker::MIN_LEN
            || self.secrets.iter().any(|(value, _)| *value == secret.value)
        {
            return;
        }
        self.secrets.push((secret.value.clone(), format!("{{env:{}}}", secret.name)));
        self.secrets.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    }

    /// Mask every secret in `secrets` from now on.
    pub fn add_all<'s>(&mut self, secrets: impl IntoIterator<Item = &'s Secret>) {
        for secret in secrets {
            self.add(secret);
        }
    }

    /// True when there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret value replaced by its token, leftmost first.
    pub fn mask(&self, text: &str) -> String {
        if self.secrets.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            match self.secrets.iter().find(|(value, _)| rest.starts_with(value.as_str())) {
                Some((value, token)) => {
                    out.push_str(token);
                    rest = &rest[value.len()..];
                }
                None => {
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }
}

impl<'s> FromIterator<&'s Secret> for Masker {
    fn from_iter<I: IntoIterator<Item = &'s Secret>>(secrets: I) -> Masker {
        let mut masker = Masker::new();
        masker.add_all(secrets);
        masker
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str) -> Secret {
        Secret { name: name.into(), value: value.into() }
    }

    #[test]
    fn masks_every_occurrence() {
        let mut masker = Masker::new();
        assert!(masker.is_empty());
        masker.add(&secret("PASSWORD", "hunter22"));
        assert_eq!(
            masker.mask("typed hunter22 into Password; hunter22!"),
            "typed {env:PASSWORD} into Password; {env:PASSWORD}!"
        );
        assert_eq!(masker.mask("nothing here"), "nothing here");
    }

    #[test]
    fn short_values_are_not_masked() {
        let secrets = [secret("PIN", "42"), secret("EMPTY", ""), secret("ABC", "é€x")];
        let masker: Masker = secrets.iter().collect();
        assert_eq!(masker.mask("42 é€x"), "42 {env:ABC}");
    }

    #[test]
    fn longest_secret_wins_and_duplicates_keep_the_first_name() {
        let mut masker = Masker::new();
        masker.add(&secret("USER", "ada"));
        masker.add(&secret("EMAIL", "ada@example.com"));
        masker.add(&secret("ALIAS", "ada"));
        assert_eq!(masker.mask("ada@example.com / ada"), "{env:EMAIL} / {env:USER}");
    }

    #[test]
    fn multibyte_text_around_secrets() {
        let mut masker = Masker::new();
        masker.add(&secret("TOKEN", "s€cr€t"));
        assert_eq!(masker.mask("ü s€cr€t ü"), "ü {env:TOKEN} ü");
    }
}
