//! What a recording cost: from the prices the project configured, or as the vendor reported it,
//! or not known. An unknown cost is never shown as $0.

use std::fmt;

use crate::model::Usage;

/// Configured prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

/// Where a cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostSource {
    /// `price_input_per_mtok` and `price_output_per_mtok` of `[agent]`.
    ConfiguredPrices,
    /// The vendor's own figure in its answers (gateways such as OpenRouter send one).
    Reported,
}

/// The cost of some model usage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cost {
    Known { usd: f64, source: CostSource },
    NotReported,
}

impl Cost {
    /// Configured prices win (the project said what it pays); then the vendor's figure.
    ///
    /// Input read from or written to the vendor's prompt cache is priced as input: vendors bill
    /// cache reads lower and cache writes higher, and a single input price cannot tell.
    pub fn of(usage: &Usage, prices: Option<Prices>) -> Cost {
        if let Some(prices) = prices {
            let usd = usage.all_input_tokens() as f64 / 1e6 * prices.input_per_mtok
                + usage.output_tokens as f64 / 1e6 * prices.output_per_mtok;
            return Cost::Known { usd, source: CostSource::ConfiguredPrices };
        }
        match usage.reported_cost_usd {
            Some(usd) if usage.calls > 0 => Cost::Known { usd, source: CostSource::Reported },
            _ => Cost::NotReported,
        }
    }

    pub fn usd(&self) -> Option<f64> {
        match self {
            Cost::Known { usd, .. } => Some(*usd),
            Cost::NotReported => None,
        }
    }
}

/// `$0.0421 (configured prices)`, `$1.25 (reported by the provider)`, `cost not reported`.
impl fmt::Display for Cost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cost::Known { usd, source } => {
                let source = match source {
                    CostSource::ConfiguredPrices => "configured prices",
                    CostSource::Reported => "reported by the provider",
                };
                // Cents hide what one scenario costs; four decimals show it.
                if *usd >= 1.0 { write!(f, "${usd:.2} ({source})") } else { write!(f, "${usd:.4} ({source})") }
            }
            Cost::NotReported => f.write_str("cost not reported"),
        }
    }
}

/// `12,345 tokens in (10,000 cached), 1,234 out, 7 calls, 12.3 s`.
impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An agent that reports no model call (an external program) reported nothing: zeros
        // would read as a free session.
        if self.calls == 0 && self.all_input_tokens() == 0 && self.output_tokens == 0 {
            return f.write_str("usage not reported");
        }
        let cached = self.cache_read_tokens + self.cache_write_tokens;
        write!(f, "{} tokens in", thousands(self.all_input_tokens()))?;
        if cached > 0 {
            write!(f, " ({} cached)", thousands(cached))?;
        }
        let calls = if self.calls == 1 { "call" } else { "calls" };
        write!(
            f,
            ", {} out, {} {calls}, {:.1} s",
            thousands(self.output_tokens),
            self.calls,
            self.model_time.as_secs_f64()
        )
    }
}

fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn usage(cost: Option<f64>) -> Usage {
        Usage {
            input_tokens: 200_000,
            cache_read_tokens: 700_000,
            cache_write_tokens: 100_000,
            output_tokens: 50_000,
            calls: 12,
            model_time: Duration::from_millis(12_340),
            reported_cost_usd: cost,
        }
    }

    #[test]
    fn configured_prices_win_then_the_reported_cost_then_not_reported() {
        let prices = Prices { input_per_mtok: 3.0, output_per_mtok: 15.0 };
        let priced = Cost::of(&usage(Some(9.0)), Some(prices));
        assert_eq!(priced, Cost::Known { usd: 3.75, source: CostSource::ConfiguredPrices });
        assert_eq!(priced.to_string(), "$3.75 (configured prices)");
        let reported = Cost::of(&usage(Some(0.0421)), None);
        assert_eq!(reported.to_string(), "$0.0421 (reported by the provider)");
        let unknown = Cost::of(&usage(None), None);
        assert_eq!(unknown, Cost::NotReported);
        assert_eq!(unknown.to_string(), "cost not reported");
        assert_eq!(unknown.usd(), None);
        assert_eq!(Cost::of(&Usage::default(), None), Cost::NotReported, "no calls, no cost: still not $0");
        let free = Cost::of(&usage(None), Some(Prices { input_per_mtok: 0.0, output_per_mtok: 0.0 }));
        assert_eq!(free.to_string(), "$0.0000 (configured prices)", "a configured price of 0 is a known cost");
    }

    #[test]
    fn usage_reads_as_a_line() {
        assert_eq!(usage(None).to_string(), "1,000,000 tokens in (800,000 cached), 50,000 out, 12 calls, 12.3 s");
        let one = Usage { input_tokens: 950, output_tokens: 12, calls: 1, ..Usage::default() };
        assert_eq!(one.to_string(), "950 tokens in, 12 out, 1 call, 0.0 s");
        assert_eq!(Usage::default().to_string(), "usage not reported");
    }
}
