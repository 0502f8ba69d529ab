//! Stable file names for features and scenarios.
//!
//! A slug is lowercase ASCII letters, digits and single dashes, never empty, at most
//! [`MAX_SLUG_LEN`] bytes. Accented Latin letters are transliterated (`é` → `e`, `ß` → `ss`);
//! other characters separate words. A name with nothing left (all CJK, say) gets a slug from
//! its digest, so it stays stable and distinct.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

/// The longest slug, in bytes.
pub const MAX_SLUG_LEN: usize = 80;

/// The slug of a feature file from its path relative to the project root:
/// `features/shop/Cart Checkout.feature` → `shop-cart-checkout`. A leading `features/` and
/// the file extension are dropped; directories join the name with dashes.
pub fn feature_slug(relative_path: &str) -> String {
    let normalized = relative_path.replace('\\', "/");
    let mut path = normalized.trim_start_matches("./");
    path = path.strip_prefix("features/").unwrap_or(path);
    let file_start = path.rfind('/').map_or(0, |index| index + 1);
    if let Some(dot) = path[file_start..].rfind('.').filter(|dot| *dot > 0) {
        path = &path[..file_start + dot];
    }
    slugify(path).unwrap_or_else(|| fallback("feature", relative_path))
}

/// The slug of one scenario name, without collision handling: see [`scenario_slugs`].
pub fn scenario_slug(name: &str) -> String {
    slugify(name).unwrap_or_else(|| fallback("scenario", name))
}

/// The slugs of all scenarios of one feature, in order of appearance. The first scenario
/// with a given slug keeps it; later ones get `-2`, `-3`, ... in order.
pub fn scenario_slugs<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    scenario_slugs_and_tries(names).0
}

/// [`scenario_slugs`], and how many numbered slugs it tried: linear in the names however many
/// share one, so a feature with thousands of same-named scenarios costs no more than others.
fn scenario_slugs_and_tries<S: AsRef<str>>(names: &[S]) -> (Vec<String>, usize) {
    let mut used = HashSet::new();
    // The number each slug tries next when it is taken: every number below it is taken too,
    // and stays taken, so no search starts again from 2.
    let mut next_number: HashMap<String, usize> = HashMap::new();
    let mut tries = 0;
    let slugs = names
        .iter()
        .map(|name| {
            let base = scenario_slug(name.as_ref());
            let slug = if used.contains(&base) {
                let number = next_number.entry(base.clone()).or_insert(2);
                loop {
                    tries += 1;
                    let candidate = format!("{base}-{number}");
                    *number += 1;
                    if !used.contains(&candidate) {
                        break candidate;
                    }
                }
            } else {
                base
            };
            used.insert(slug.clone());
            slug
        })
        .collect();
    (slugs, tries)
}

fn slugify(text: &str) -> Option<String> {
    let mut slug = String::new();
    let mut pending_dash = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        let ascii = transliterate(c);
        if ascii.is_empty() {
            pending_dash = true;
            continue;
        }
        if pending_dash && !slug.is_empty() {
            slug.push('-');
        }
        pending_dash = false;
        slug.push_str(ascii);
    }
    if slug.len() > MAX_SLUG_LEN {
        let cut = slug[..=MAX_SLUG_LEN].rfind('-').filter(|index| *index > 0).unwrap_or(MAX_SLUG_LEN);
        slug.truncate(cut);
    }
    (!slug.is_empty()).then_some(slug)
}

fn fallback(prefix: &str, text: &str) -> String {
    let digest = hex::encode(Sha256::digest(text.as_bytes()));
    format!("{prefix}-{}", &digest[..8])
}

// Letters of Latin-1 and Latin Extended-A, the ones feature names in European languages use.
// An empty string means "separator".
fn transliterate(c: char) -> &'static str {
    const ALNUM: [&str; 36] = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
        "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z",
    ];
    if let Some(digit) = c.to_digit(36).filter(|_| c.is_ascii()) {
        return ALNUM[digit as usize];
    }
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' => "s",
        'ţ' | 'ť' | 'ŧ' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        'æ' => "ae",
        'œ' => "oe",
        'ß' => "ss",
        'þ' => "th",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_slugs() {
        let cases = [
            ("features/shop/Cart Checkout.feature", "shop-cart-checkout"),
            ("features/login.feature", "login"),
            ("./features/a/b/c.saffron", "a-b-c"),
            ("features\\win\\Path.feature", "win-path"),
            ("specs/features/x.feature", "specs-features-x"),
            ("features/shared.steps.saffron", "shared-steps"),
            ("features/Crème Brûlée — Straße.feature", "creme-brulee-strasse"),
            ("features/ÆØÅ.feature", "aeoa"),
            ("features/.hidden", "hidden"),
            ("features/v2.0/API_v1.feature", "v2-0-api-v1"),
        ];
        for (path, slug) in cases {
            assert_eq!(feature_slug(path), slug, "{path}");
        }
    }

    #[test]
    fn slugs_are_never_empty_and_stay_distinct() {
        let first = feature_slug("features/買い物.feature");
        assert!(first.starts_with("feature-") && first.len() == 16, "{first}");
        assert_ne!(first, feature_slug("features/支払い.feature"));
        assert_eq!(first, feature_slug("features/買い物.feature"));
        assert!(scenario_slug("").starts_with("scenario-"));
        assert!(scenario_slug("!!!").starts_with("scenario-"));
    }

    #[test]
    fn scenario_slugs_with_collisions_in_order() {
        let names = ["Add to cart", "Add to cart!", "Pay with <card>", "add-to-cart", "Add to cart 2", "Pay with card"];
        assert_eq!(
            scenario_slugs(&names),
            ["add-to-cart", "add-to-cart-2", "pay-with-card", "add-to-cart-3", "add-to-cart-2-2", "pay-with-card-2",]
        );
        assert_eq!(scenario_slugs::<&str>(&[]), Vec::<String>::new());
    }

    /// Twenty thousand scenarios of one name, and names that look numbered, cost one try each
    /// (a search from 2 for each would try two hundred million), and get the same slugs.
    #[test]
    fn many_scenarios_of_one_name_are_numbered_in_linear_time() {
        let mut names = vec!["Add to cart 5".to_string(), "add-to-cart-7".to_string()];
        names.extend(std::iter::repeat_n("Add to cart".to_string(), 20_000));
        names.push("Add to cart 2".to_string());
        let (slugs, tries) = scenario_slugs_and_tries(&names);
        assert!(tries <= names.len(), "{tries} tries for {} names", names.len());
        assert_eq!(
            &slugs[..9],
            [
                "add-to-cart-5",
                "add-to-cart-7",
                "add-to-cart",
                "add-to-cart-2",
                "add-to-cart-3",
                "add-to-cart-4",
                "add-to-cart-6",
                "add-to-cart-8",
                "add-to-cart-9"
            ]
        );
        assert_eq!(slugs[20_001], "add-to-cart-20002");
        assert_eq!(slugs[20_002], "add-to-cart-2-2");
        assert_eq!(slugs.iter().collect::<HashSet<_>>().len(), slugs.len());
    }

    #[test]
    fn long_names_are_cut_at_a_word() {
        let name = "word ".repeat(40);
        let slug = scenario_slug(&name);
        assert!(slug.len() <= MAX_SLUG_LEN);
        assert!(slug.ends_with("word"), "{slug}");
        let one_word = "x".repeat(200);
        assert_eq!(scenario_slug(&one_word).len(), MAX_SLUG_LEN);
    }

    #[test]
    fn slug_charset() {
        for name in ["A  b", "-a-", "Ünïcödé ✓ ok", "tab\there", "İstanbul"] {
            let slug = scenario_slug(name);
            assert!(slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{slug}");
            assert!(!slug.starts_with('-') && !slug.ends_with('-') && !slug.contains("--"));
        }
    }
}
