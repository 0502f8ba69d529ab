//! Scale benchmark: `saffron steps` and `saffron status` (the release binary) on generated
//! projects of N distinct step texts that share many common words, with wall time and peak
//! memory (the largest resident set of the `saffron` process, from `getrusage`), and its CPU
//! time on all threads.
//!
//! Two vocabularies: `realistic` (Gherkin phrasing of a shop's back office and checkout: a few
//! hundred wordings, each used with many quoted names, e-mails, prices and counts, and about 1%
//! of texts drifted from another by a typo, a dropped word or a change of case), and
//! `adversarial` (every text is 6 to 10 words drawn from the same 30 common words, so every text
//! is a near-duplicate candidate of every other). A third project, `huge-file`, is one feature
//! file of `--file-mb` MB (default 20) shaped like the one a user reported: thousands of
//! scenarios, most of them under a handful of names, Outlines with Examples tables of hundreds
//! of rows, steps with long data tables, and the realistic vocabulary.
//!
//! Run: `cargo build --release -p saffron-cli && cargo bench -p saffron-benches --bench scale`.
//! Options (after `--`): `--sizes 2500,10000,100000`, `--variants realistic,adversarial,huge-file`,
//! `--layout files|one-file` (one file holds every scenario), `--file-mb MB`, `--timeout SECONDS`
//! (a run that takes longer is stopped and reported as such), `--saffron PATH` (another build,
//! e.g. an older one), `--keep` (leave the generated projects in the temporary folder).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const STEPS_PER_SCENARIO: usize = 10;
const SCENARIOS_PER_FILE: usize = 50;

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Realistic,
    Adversarial,
    HugeFile,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Realistic => "realistic",
            Variant::Adversarial => "adversarial",
            Variant::HugeFile => "huge-file",
        }
    }
}

struct Options {
    sizes: Vec<usize>,
    variants: Vec<Variant>,
    one_file: bool,
    file_megabytes: usize,
    timeout: Duration,
    saffron: PathBuf,
    keep: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        sizes: vec![2_500, 10_000, 100_000],
        variants: vec![Variant::Realistic, Variant::Adversarial, Variant::HugeFile],
        one_file: false,
        file_megabytes: 20,
        timeout: Duration::from_secs(300),
        saffron: Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/saffron"),
        keep: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--sizes" => {
                options.sizes = value()?
                    .split(',')
                    .map(|size| size.trim().parse().map_err(|_| format!("not a size: {size}")))
                    .collect::<Result<_, _>>()?
            }
            "--variants" => {
                options.variants = value()?
                    .split(',')
                    .map(|name| match name.trim() {
                        "realistic" => Ok(Variant::Realistic),
                        "adversarial" => Ok(Variant::Adversarial),
                        "huge-file" => Ok(Variant::HugeFile),
                        other => Err(format!("unknown variant {other} (realistic, adversarial, huge-file)")),
                    })
                    .collect::<Result<_, _>>()?
            }
            "--layout" => {
                options.one_file = match value()?.as_str() {
                    "files" => false,
                    "one-file" => true,
                    other => return Err(format!("unknown layout {other} (files, one-file)")),
                }
            }
            "--file-mb" => {
                options.file_megabytes = value()?.parse().map_err(|_| "--file-mb takes megabytes".to_string())?
            }
            "--timeout" => {
                let seconds: u64 = value()?.parse().map_err(|_| "--timeout takes seconds".to_string())?;
                options.timeout = Duration::from_secs(seconds);
            }
            "--saffron" => options.saffron = PathBuf::from(value()?),
            "--keep" => options.keep = true,
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|arg| arg == "--measure-one") {
        return measure_one(&args[2..]);
    }
    let options = match options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    if !options.saffron.is_file() {
        eprintln!("build the release binary first: cargo build --release -p saffron-cli");
        return ExitCode::FAILURE;
    }
    let Ok(me) = std::env::current_exe() else { return ExitCode::FAILURE };
    println!("scale: `saffron steps` and `saffron status` on generated projects ({})", options.saffron.display());
    println!("| variant | distinct texts | files | MB | command | wall | CPU | peak memory | output |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for &variant in &options.variants {
        // The huge file is one project, whatever the sizes.
        let sizes: &[usize] = if variant == Variant::HugeFile { &[0] } else { &options.sizes };
        for &size in sizes {
            let root = std::env::temp_dir().join(match variant {
                Variant::HugeFile => format!("saffron-scale-huge-file-{}mb", options.file_megabytes),
                _ => format!(
                    "saffron-scale-{}-{size}{}",
                    variant.name(),
                    if options.one_file { "-one-file" } else { "" }
                ),
            });
            let generated = match variant {
                Variant::HugeFile => generate_huge_file(&root, options.file_megabytes),
                _ => generate(&root, variant, size, options.one_file).map(|(files, bytes)| (files, bytes, size)),
            };
            let (files, bytes, size) = match generated {
                Ok(written) => written,
                Err(error) => {
                    eprintln!("cannot write the project at {}: {error}", root.display());
                    return ExitCode::FAILURE;
                }
            };
            for command in ["steps", "status"] {
                let run = Command::new(&me)
                    .arg("--measure-one")
                    .arg(&options.saffron)
                    .arg(&root)
                    .arg(command)
                    .arg(options.timeout.as_secs().to_string())
                    .output();
                let figures = match run {
                    Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout).trim().to_string(),
                    Ok(output) => format!("failed: {}", String::from_utf8_lossy(&output.stderr).trim()),
                    Err(error) => format!("cannot run: {error}"),
                };
                println!(
                    "| {} | {size} | {files} | {:.1} | {command} | {figures} |",
                    variant.name(),
                    bytes as f64 / 1_000_000.0
                );
            }
            if !options.keep {
                let _ = std::fs::remove_dir_all(&root);
            }
        }
    }
    ExitCode::SUCCESS
}

/// Runs `saffron COMMAND` once in the project (a process of its own, so the peak memory that
/// `getrusage` reports for its children is this run's alone) and prints `wall | peak | output`,
/// where output is the size and a hash of stdout, to compare two builds.
fn measure_one(args: &[String]) -> ExitCode {
    let [saffron, root, command, timeout] = args else {
        eprintln!("--measure-one SAFFRON ROOT COMMAND TIMEOUT");
        return ExitCode::FAILURE;
    };
    let timeout = Duration::from_secs(timeout.parse().unwrap_or(300));
    let start = Instant::now();
    let child = Command::new(saffron)
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            eprintln!("cannot start {saffron}: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The output is read on a thread so a full pipe never stalls the run being timed.
    let Some(mut stdout) = child.stdout.take() else { return ExitCode::FAILURE };
    let reader = std::thread::spawn(move || {
        let mut output = Vec::new();
        let _ = stdout.read_to_end(&mut output);
        output
    });
    let deadline = start + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => {
                eprintln!("cannot wait for {saffron}: {error}");
                return ExitCode::FAILURE;
            }
        }
    };
    let wall = start.elapsed();
    let output = reader.join().unwrap_or_default();
    // CPU time (all threads) moves less than wall time when other work shares the machine.
    let (peak, cpu) = saffron_benches::children_usage();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    output.hash(&mut hasher);
    match status {
        Some(status) if status.success() => println!(
            "{:.2} s | {cpu:.2} s | {peak:.0} MB | {} lines, hash {:016x}",
            wall.as_secs_f64(),
            output.iter().filter(|&&b| b == b'\n').count(),
            hasher.finish()
        ),
        Some(status) => println!("{:.2} s | {cpu:.2} s | {peak:.0} MB | exited with {status}", wall.as_secs_f64()),
        None => println!("> {} s (stopped) | {cpu:.2} s | {peak:.0} MB | -", timeout.as_secs()),
    }
    ExitCode::SUCCESS
}

/// Writes a project of `size` distinct step texts at `root` (replacing what was there); returns
/// the number of feature files and their bytes.
fn generate(root: &Path, variant: Variant, size: usize, one_file: bool) -> std::io::Result<(usize, usize)> {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root.join("features"))?;
    saffron_recording::write_atomic(&root.join("saffron.toml"), b"")?;
    let mut rng = SmallRng::seed_from_u64(size as u64);
    let texts = match variant {
        Variant::Adversarial => adversarial_texts(&mut rng, size),
        Variant::Realistic | Variant::HugeFile => realistic_texts(&mut rng, size),
    };
    let per_file = if one_file { texts.len().max(1) } else { STEPS_PER_SCENARIO * SCENARIOS_PER_FILE };
    let (mut files, mut bytes) = (0, 0);
    for (number, chunk) in texts.chunks(per_file).enumerate() {
        let mut feature =
            format!("Feature: Generated {number}\n\n  Background:\n    Given I am logged in as an administrator\n");
        for (scenario, steps) in chunk.chunks(STEPS_PER_SCENARIO).enumerate() {
            feature.push_str(&format!("\n  Scenario: Generated scenario {number}-{scenario}\n"));
            for (index, text) in steps.iter().enumerate() {
                let keyword = match index {
                    0 => "Given",
                    1 => "When",
                    i if i == steps.len() - 1 => "Then",
                    _ => "And",
                };
                feature.push_str(&format!("    {keyword} {text}\n"));
            }
        }
        bytes += feature.len();
        files += 1;
        saffron_recording::write_atomic(
            &root.join("features").join(format!("generated_{number:05}.feature")),
            feature.as_bytes(),
        )?;
    }
    Ok((files, bytes))
}

/// Scenario names of the huge file: most scenarios share one of these, as when a file grows by
/// copying a scenario and changing its steps.
const SCENARIO_NAMES: &[&str] =
    &["Adding a product", "Checking out", "Managing orders", "Browsing the catalog", "Editing a customer"];

/// Writes a project of one feature file of about `megabytes` MB at `root`: 80% plain scenarios
/// of 4 to 12 steps (half of them written before), 15% with a data table of 10 to 150 rows,
/// 5% Outlines with an Examples table of 50 to 400 rows; nine scenarios in ten under one of five
/// names. Returns the files (1), their bytes and the distinct step texts written.
fn generate_huge_file(root: &Path, megabytes: usize) -> std::io::Result<(usize, usize, usize)> {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root.join("features"))?;
    saffron_recording::write_atomic(&root.join("saffron.toml"), b"")?;
    let mut rng = SmallRng::seed_from_u64(megabytes as u64);
    let target = megabytes * 1_000_000;
    let mut feature = String::from(
        "Feature: Everything the shop does\n\n  Background:\n    Given I am logged in as an administrator\n",
    );
    let mut written: Vec<String> = Vec::new();
    let mut distinct = HashSet::new();
    let mut scenario = 0;
    while feature.len() < target {
        scenario += 1;
        let name = if rng.random_bool(0.9) {
            pick(&mut rng, SCENARIO_NAMES).to_string()
        } else {
            format!("Scenario number {scenario}")
        };
        let kind = rng.random_range(0..100);
        let keyword = if kind < 5 { "Scenario Outline" } else { "Scenario" };
        feature.push_str(&format!("\n  {keyword}: {name}\n"));
        let steps = rng.random_range(4..=12);
        for index in 0..steps {
            let keyword = match index {
                0 => "Given",
                1 => "When",
                i if i == steps - 1 => "Then",
                _ => "And",
            };
            let text = if kind < 5 && index == 1 {
                "I add <count> \"<product>\" products priced at \"<price>\" to the cart".to_string()
            } else if !written.is_empty() && rng.random_bool(0.5) {
                written[rng.random_range(0..written.len())].clone()
            } else {
                let text = realistic_text(&mut rng);
                written.push(text.clone());
                text
            };
            distinct.insert(text.clone());
            feature.push_str(&format!("    {keyword} {text}\n"));
            if (5..20).contains(&kind) && index == 0 {
                feature.push_str("      | name | price | code |\n");
                for row in 0..rng.random_range(10..=150) {
                    let (name, price) = (product(&mut rng), price(&mut rng));
                    feature.push_str(&format!("      | {name} | {price} | P{row:05} |\n"));
                }
            }
        }
        if kind < 5 {
            feature.push_str("\n    Examples:\n      | count | product | price |\n");
            for _ in 0..rng.random_range(50..=400) {
                let (count, name, price) = (rng.random_range(1..20), product(&mut rng), price(&mut rng));
                feature.push_str(&format!("      | {count} | {name} | {price} |\n"));
            }
        }
    }
    saffron_recording::write_atomic(&root.join("features").join("everything.feature"), feature.as_bytes())?;
    Ok((1, feature.len(), distinct.len()))
}

fn pick<'a>(rng: &mut SmallRng, words: &[&'a str]) -> &'a str {
    words[rng.random_range(0..words.len())]
}

const ADJECTIVES: &[&str] = &[
    "red", "blue", "green", "black", "white", "golden", "silver", "wooden", "plastic", "vintage", "modern", "classic",
    "compact", "large", "small", "heavy", "light", "soft", "warm", "cold", "organic", "premium", "basic", "deluxe",
    "sporty", "elegant", "rustic", "bright", "dark", "striped", "dotted", "woolen", "leather", "cotton", "linen",
    "glass", "steel", "ceramic", "bamboo", "marble",
];
const NOUNS: &[&str] = &[
    "mug", "shirt", "jacket", "lamp", "chair", "table", "sofa", "hat", "scarf", "bag", "wallet", "watch", "bottle",
    "plate", "bowl", "cup", "knife", "spoon", "pillow", "blanket", "poster", "frame", "clock", "mirror", "vase",
    "candle", "notebook", "pen", "backpack", "umbrella", "sneakers", "boots", "gloves", "belt", "socks", "dress",
    "skirt", "sweater", "hoodie", "cap",
];
const FIRST_NAMES: &[&str] = &[
    "anna", "bob", "carla", "dmitri", "elena", "frank", "grace", "hugo", "ines", "jack", "kate", "liam", "mia", "noah",
    "olga", "pablo", "quinn", "rosa", "sam", "tina", "ugo", "vera", "will", "xena", "yann", "zoe",
];
const LAST_NAMES: &[&str] = &[
    "smith", "jones", "garcia", "muller", "rossi", "dubois", "novak", "silva", "kowalski", "nielsen", "ivanova",
    "tanaka", "kim", "chen", "olsen", "berg", "costa", "lopez", "meyer", "fischer",
];
const ENTITIES: &[&str] = &[
    "product",
    "taxon",
    "channel",
    "customer",
    "order",
    "promotion",
    "coupon",
    "shipping method",
    "payment method",
    "zone",
    "country",
    "tax rate",
    "catalog promotion",
    "attribute",
    "product option",
    "product variant",
    "review",
    "address",
    "currency",
    "locale",
    "customer group",
    "inventory source",
];
const FIELDS: &[&str] = &[
    "name",
    "code",
    "description",
    "price",
    "email",
    "password",
    "slug",
    "position",
    "phone number",
    "city",
    "street",
    "postcode",
    "company",
    "meta keywords",
    "meta description",
    "short description",
    "weight",
    "width",
];
const VERBS: &[&str] = &[
    "create",
    "edit",
    "delete",
    "browse",
    "view",
    "enable",
    "disable",
    "rename",
    "archive",
    "restore",
    "duplicate",
    "export",
];
const PAST: &[&str] =
    &["created", "edited", "deleted", "enabled", "disabled", "renamed", "archived", "restored", "updated", "saved"];
const STATES: &[&str] = &["enabled", "disabled", "available", "visible", "hidden", "archived", "in stock", "sold out"];
const PAGES: &[&str] = &["dashboard", "index", "product", "cart", "checkout", "account", "order history", "login"];

fn product(rng: &mut SmallRng) -> String {
    let name = format!("{} {}", pick(rng, ADJECTIVES), pick(rng, NOUNS));
    if rng.random_bool(0.3) { format!("{name} {}", rng.random_range(1..100)) } else { name }
}

fn person(rng: &mut SmallRng) -> (String, String) {
    let (first, last) = (pick(rng, FIRST_NAMES), pick(rng, LAST_NAMES));
    (format!("{first} {last}"), format!("{first}.{last}@example.com"))
}

fn price(rng: &mut SmallRng) -> String {
    format!("${}.{:02}", rng.random_range(1..500), rng.random_range(0..100))
}

/// One step in the shop's phrasing, with its values.
fn realistic_text(rng: &mut SmallRng) -> String {
    let entity = pick(rng, ENTITIES);
    let field = pick(rng, FIELDS);
    let n = rng.random_range(1..60);
    match rng.random_range(0..30) {
        0 => format!("I want to {} the {entity} \"{}\"", pick(rng, VERBS), product(rng)),
        1 => format!("I want to {} a new {entity}", pick(rng, VERBS)),
        2 => format!("the store has a {entity} \"{}\"", product(rng)),
        3 => format!(
            "the store has a {entity} \"{}\" with code \"{}_{n}\"",
            product(rng),
            pick(rng, NOUNS).to_uppercase()
        ),
        4 => format!("I specify its {field} as \"{}\"", product(rng)),
        5 => format!("I {} the {entity} \"{}\"", pick(rng, VERBS), product(rng)),
        6 => format!("I should see {n} {entity}s in the list"),
        7 => format!("I should be notified that the {entity} has been successfully {}", pick(rng, PAST)),
        8 => format!("the {entity} \"{}\" should be {}", product(rng), pick(rng, STATES)),
        9 => format!("this {entity} should have {field} \"{}\"", product(rng)),
        10 => format!("I add {n} \"{}\" products to the cart", product(rng)),
        11 => format!("I add \"{}\" to the cart", product(rng)),
        12 => format!("I remove \"{}\" from the cart", product(rng)),
        13 => format!("I change the quantity of \"{}\" to {n}", product(rng)),
        14 => format!("the product \"{}\" should cost \"{}\"", product(rng), price(rng)),
        15 => format!("the store has a product \"{}\" priced at \"{}\"", product(rng), price(rng)),
        16 => {
            let (_, email) = person(rng);
            format!("there is a customer \"{email}\" identified by \"{}{n}\"", pick(rng, NOUNS))
        }
        17 => format!("I am logged in as \"{}\"", person(rng).1),
        18 => format!("the customer \"{}\" placed an order \"#{:06}\"", person(rng).0, rng.random_range(0..1_000_000)),
        19 => format!("I filter {entity}s by \"{}\"", product(rng)),
        20 => format!(
            "I sort the {entity}s by {field} in {} order",
            if rng.random_bool(0.5) { "ascending" } else { "descending" }
        ),
        21 => format!("my cart total should be \"{}\"", price(rng)),
        22 => format!("I should not be able to {} the {entity} \"{}\"", pick(rng, VERBS), product(rng)),
        23 => format!("the {entity} \"{}\" should not be {}", product(rng), pick(rng, STATES)),
        24 => format!("I complete the checkout as \"{}\"", person(rng).1),
        25 => format!("the order \"#{:06}\" should have {n} items", rng.random_range(0..1_000_000)),
        26 => format!("I open the {} page of \"{}\"", pick(rng, PAGES), product(rng)),
        27 => format!("I check the {} {} checkbox", pick(rng, ADJECTIVES), field),
        28 => format!("the {} should cost \"{}\" in the \"{}\" channel", entity, price(rng), pick(rng, ADJECTIVES)),
        _ => format!("I assign the \"{}\" {entity} to the customer \"{}\"", product(rng), person(rng).0),
    }
}

/// Typo-level drift of a text, as people make it: two letters swapped, a word dropped, a
/// capital letter, a word added.
fn drift(rng: &mut SmallRng, text: &str) -> String {
    let mut words: Vec<String> = text.split(' ').map(String::from).collect();
    let at = rng.random_range(0..words.len());
    match rng.random_range(0..4) {
        0 if words[at].len() > 3 && words[at].is_ascii() => {
            let mut letters: Vec<char> = words[at].chars().collect();
            let swap = rng.random_range(1..letters.len() - 1);
            letters.swap(swap, swap + 1);
            words[at] = letters.into_iter().collect();
        }
        1 if words.len() > 4 && !words[at].contains('"') => {
            words.remove(at);
        }
        2 => words[0] = words[0].to_uppercase(),
        _ => words.insert(at, "then".to_string()),
    }
    words.join(" ")
}

fn realistic_texts(rng: &mut SmallRng, size: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut texts = Vec::with_capacity(size);
    while texts.len() < size {
        let text = if texts.len() > 10 && rng.random_bool(0.01) {
            let original: &String = &texts[rng.random_range(0..texts.len())];
            drift(rng, original)
        } else {
            realistic_text(rng)
        };
        if seen.insert(text.clone()) {
            texts.push(text);
        }
    }
    texts
}

const COMMON_WORDS: &[&str] = &[
    "i", "the", "a", "should", "see", "click", "on", "button", "page", "in", "to", "be", "is", "and", "of", "with",
    "my", "it", "this", "have", "as", "for", "list", "item", "user", "form", "field", "new", "open", "save",
];

/// Texts of 6 to 10 words, all drawn from the same 30 common words.
fn adversarial_texts(rng: &mut SmallRng, size: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut texts = Vec::with_capacity(size);
    while texts.len() < size {
        let length = rng.random_range(6..=10);
        let words: Vec<&str> = (0..length).map(|_| pick(rng, COMMON_WORDS)).collect();
        let text = words.join(" ");
        if seen.insert(text.clone()) {
            texts.push(text);
        }
    }
    texts
}
