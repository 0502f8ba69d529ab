//! The switches: what the demo app breaks on purpose, and how.
//!
//! Every switch has one kebab-case name used everywhere it crosses a boundary (CLI flags,
//! the `/__demo/config` JSON, the README), so `FromStr`, `Display` and serde agree by
//! construction: all three are generated from the same table below.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The password of the demo account when none is configured.
pub const DEFAULT_PASSWORD: &str = "saffron-demo";
/// The e-mail address of the one demo account.
pub const DEMO_EMAIL: &str = "demo@saffron.test";
/// How long `Fault::Latency` delays each `/api/` response when not configured.
pub const DEFAULT_LATENCY_MS: u64 = 1500;

/// Which switches are on. The JSON form is what `GET/PUT /__demo/config` speak.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DemoConfig {
    /// UI drift: the same behaviour behind a changed surface (labels, test ids, layout, classes).
    pub drift: BTreeSet<Drift>,
    /// Runtime faults: the app is right but the ride is rough (errors, slowness, overlays, expiry).
    pub faults: BTreeSet<Fault>,
    /// Real defects: the app is wrong, and a test must go red.
    pub defects: BTreeSet<Defect>,
    /// Password of `demo@saffron.test`.
    pub password: String,
    /// Delay added to every `/api/` response while `Fault::Latency` is on.
    pub latency_ms: u64,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            drift: BTreeSet::new(),
            faults: BTreeSet::new(),
            defects: BTreeSet::new(),
            password: DEFAULT_PASSWORD.to_owned(),
            latency_ms: DEFAULT_LATENCY_MS,
        }
    }
}

impl DemoConfig {
    pub fn has_drift(&self, drift: Drift) -> bool {
        self.drift.contains(&drift)
    }

    pub fn has_fault(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }

    pub fn has_defect(&self, defect: Defect) -> bool {
        self.defects.contains(&defect)
    }
}

/// A switch name that is not one of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}`; expected one of: {expected}")]
pub struct ParseSwitchError {
    /// "drift", "fault" or "defect".
    pub kind: &'static str,
    pub value: String,
    /// The accepted names, comma-separated, so a CLI can print the error as is.
    pub expected: String,
}

/// Generates an enum whose variants each have one kebab-case name, with `ALL`, `as_str`,
/// `Display`, `FromStr` and serde all reading that one name.
macro_rules! switch_enum {
    ($(#[$meta:meta])* $name:ident, $kind:literal, { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The kebab-case name used by CLI flags and the config JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ParseSwitchError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| ParseSwitchError {
                    kind: $kind,
                    value: s.to_owned(),
                    expected: $name::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", "),
                })
            }
        }
    };
}

switch_enum!(
    /// UI drift: markup changes a user would barely notice but a brittle selector would.
    Drift, "drift", {
        /// The Email label reads "E-mail address", the Customer label "Customer name".
        RenamedLabel => "renamed-label",
        /// Every `data-testid` attribute is gone.
        RemovedTestId => "removed-test-id",
        /// The search form and the "New order" link move into an `<aside>` before the table, and
        /// the compact search box keeps only its placeholder as its name.
        MovedElement => "moved-element",
        /// Primary buttons get new classes and a wrapping `<div class="actions">`.
        RestyledButton => "restyled-button",
        /// "Save order" becomes "Place order" in a toolbar at the top of the form, and no
        /// signal the recordings hold (role and name, test id, CSS) finds it any more.
        RelocatedSave => "relocated-save",
        /// Opening an order from the orders list first shows an "Open order #1001?" page whose
        /// "Continue" button leads to the order.
        ConfirmStep => "confirm-step",
        /// `POST /api/orders` reads the quantity from `count`: a body with `quantity` is
        /// answered 400 "Quantity is required (the field is `count` now)". The new-order page
        /// sends `count`, as a release of both would. API drift: only a repair of an `@api`
        /// recording gets past it.
        RenamedApiField => "renamed-api-field",
    }
);

impl Drift {
    /// Whether a replay of the example recordings fails under this drift: no locator fallback
    /// survives it, so only a heal (the agent taking over mid-run) gets past it. The other
    /// drifts are survived through a lower locator tier.
    pub fn needs_heal(self) -> bool {
        match self {
            Drift::RenamedLabel | Drift::RemovedTestId | Drift::MovedElement | Drift::RestyledButton => false,
            Drift::RelocatedSave | Drift::ConfirmStep | Drift::RenamedApiField => true,
        }
    }
}

switch_enum!(
    /// Runtime faults: the app is correct but hostile to automation.
    Fault, "fault", {
        /// `POST /api/orders` answers 500.
        ServerError => "server-error",
        /// Every `/api/` response is delayed by `latency_ms`.
        Latency => "latency",
        /// A cookie-consent dialog covers signed-in pages until accepted.
        Interstitial => "interstitial",
        /// A session serves one request after sign-in, then expires; signing in again in the same
        /// browser gives a session that lasts.
        SessionExpiry => "session-expiry",
        /// The first sign-in page the server is asked for answers 503, once: the scenario that
        /// loads it first fails its first attempt and passes when run again (a flake).
        FlakyOnce => "flaky-once",
    }
);

switch_enum!(
    /// Real defects: behaviour a correct test must catch.
    Defect, "defect", {
        /// New orders cost €1.00 more than quantity × price, and the live total agrees with the bug.
        WrongTotal => "wrong-total",
        /// Saving works but "Order saved" is never shown.
        MissingConfirmation => "missing-confirmation",
        /// `POST /api/orders` answers 201 but the order is never stored.
        SaveFails => "save-fails",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_round_trips_through_its_string_form() {
        for d in Drift::ALL {
            assert_eq!(d.to_string().parse::<Drift>(), Ok(*d));
            assert_eq!(serde_json::to_string(d).ok(), Some(format!("\"{d}\"")));
        }
        for f in Fault::ALL {
            assert_eq!(f.to_string().parse::<Fault>(), Ok(*f));
            assert_eq!(serde_json::to_string(f).ok(), Some(format!("\"{f}\"")));
        }
        for d in Defect::ALL {
            assert_eq!(d.to_string().parse::<Defect>(), Ok(*d));
            assert_eq!(serde_json::to_string(d).ok(), Some(format!("\"{d}\"")));
        }
    }

    #[test]
    fn string_forms_are_the_documented_ones() {
        assert_eq!(Drift::RenamedLabel.as_str(), "renamed-label");
        assert_eq!(Drift::RemovedTestId.as_str(), "removed-test-id");
        assert_eq!(Drift::MovedElement.as_str(), "moved-element");
        assert_eq!(Drift::RestyledButton.as_str(), "restyled-button");
        assert_eq!(Drift::RelocatedSave.as_str(), "relocated-save");
        assert_eq!(Drift::ConfirmStep.as_str(), "confirm-step");
        assert_eq!(Fault::ServerError.as_str(), "server-error");
        assert_eq!(Fault::Latency.as_str(), "latency");
        assert_eq!(Fault::Interstitial.as_str(), "interstitial");
        assert_eq!(Fault::SessionExpiry.as_str(), "session-expiry");
        assert_eq!(Defect::WrongTotal.as_str(), "wrong-total");
        assert_eq!(Defect::MissingConfirmation.as_str(), "missing-confirmation");
        assert_eq!(Defect::SaveFails.as_str(), "save-fails");
    }

    #[test]
    fn unknown_switch_names_the_accepted_ones() {
        let err = "server-eror".parse::<Fault>().err();
        let err = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("unknown fault `server-eror`"), "{err}");
        assert!(err.contains("server-error, latency, interstitial, session-expiry"), "{err}");
        // Names are exact: the CLI should not silently accept a differently-cased flag.
        assert!("Renamed-Label".parse::<Drift>().is_err());
    }

    #[test]
    fn config_json_defaults_missing_fields_and_rejects_unknown_ones() {
        let cfg: DemoConfig = serde_json::from_str(r#"{"faults":["latency"],"latency_ms":10}"#).unwrap_or_default();
        assert!(cfg.has_fault(Fault::Latency));
        assert_eq!(cfg.latency_ms, 10);
        assert_eq!(cfg.password, DEFAULT_PASSWORD);
        assert!(serde_json::from_str::<DemoConfig>(r#"{"fault":["latency"]}"#).is_err());
        assert!(serde_json::from_str::<DemoConfig>(r#"{"faults":["nope"]}"#).is_err());
    }
}
