//! The JSON Schemas of the files Saffron reads, generated from the types it parses them with,
//! so that a binary installed without this repository can still hand them to an editor
//! (`saffron schema`), and `docs/schema/` is checked against the same bytes.

use crate::{Handler, Proposal, Recording, to_json_bytes};

/// A file kind with a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    /// `.saffron/cache/<feature>/<scenario>.json`.
    Recording,
    /// `.saffron/proposals/<feature>/<scenario>.json`.
    Proposal,
    /// `.saffron/handlers/<name>.json`.
    Handler,
}

impl SchemaKind {
    /// Every kind, in the order `saffron schema` names them.
    pub const ALL: [SchemaKind; 3] = [SchemaKind::Recording, SchemaKind::Proposal, SchemaKind::Handler];

    /// The name `saffron schema` takes.
    pub fn name(self) -> &'static str {
        match self {
            SchemaKind::Recording => "recording",
            SchemaKind::Proposal => "proposal",
            SchemaKind::Handler => "handler",
        }
    }

    /// The file name the schema is published under in `docs/schema/`.
    pub fn file_name(self) -> String {
        format!("{}.schema.json", self.name())
    }

    /// The schema as pretty JSON with a final newline, as Saffron writes every JSON file.
    pub fn json(self) -> Vec<u8> {
        let schema = match self {
            SchemaKind::Recording => schemars::schema_for!(Recording),
            SchemaKind::Proposal => schemars::schema_for!(Proposal),
            SchemaKind::Handler => schemars::schema_for!(Handler),
        };
        // A schema is a JSON value built by schemars: serializing it cannot fail.
        to_json_bytes(&schema).unwrap_or_default()
    }
}

impl std::str::FromStr for SchemaKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        SchemaKind::ALL.into_iter().find(|kind| kind.name() == name).ok_or_else(|| {
            let names: Vec<&str> = SchemaKind::ALL.iter().map(|kind| kind.name()).collect();
            format!("unknown schema `{name}`: the schemas are {}", names.join(", "))
        })
    }
}
