//! The back office's data: orders, products, export jobs. Plain data and no I/O, so the HTTP
//! layer decides what a defect does and this module only does what it is told.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long an export job reports RUNNING. Long enough that a page has to poll at least a few
/// times (the point of the job), short enough for a test.
pub const EXPORT_DURATION: Duration = Duration::from_secs(1);

/// A product: name and unit price in cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Product {
    pub name: &'static str,
    pub price_cents: i64,
}

/// The catalogue, in the order the new-order form lists it.
pub const PRODUCTS: &[Product] = &[
    Product { name: "Tea", price_cents: 450 },
    Product { name: "Mugs", price_cents: 700 },
    Product { name: "Saffron", price_cents: 1200 },
];

/// Looks a product up by name, ignoring case, so an API client sending "tea" is not refused
/// over a detail the form never exposes.
pub fn product(name: &str) -> Option<Product> {
    PRODUCTS.iter().copied().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// Formats cents as the app shows money everywhere: "€12.00".
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}€{}.{:02}", abs / 100, abs % 100)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    pub product: String,
    pub quantity: u32,
    pub unit_price_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: u32,
    pub customer: String,
    pub lines: Vec<Line>,
    /// Stored, not derived from the lines, because `Defect::WrongTotal` stores a wrong one and
    /// every view must then agree with what was stored.
    pub total_cents: i64,
    pub status: String,
    pub gift: bool,
    pub notes: Vec<String>,
    pub attachments: Vec<Attachment>,
}

/// A file attached to an order: its name and size (the content is not kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attachment {
    pub name: String,
    pub size: usize,
}

impl Order {
    /// The order's display number, "#1001".
    pub fn number(&self) -> String {
        format!("#{}", self.id)
    }
}

/// The JSON shape of an order in the API.
#[derive(Debug, Clone, Serialize)]
pub struct OrderView {
    pub id: u32,
    pub number: String,
    pub customer: String,
    pub total: String,
    pub total_cents: i64,
    pub status: String,
    pub gift: bool,
    pub lines: Vec<Line>,
    pub notes: Vec<String>,
    pub attachments: Vec<Attachment>,
}

impl From<&Order> for OrderView {
    fn from(o: &Order) -> Self {
        OrderView {
            id: o.id,
            number: o.number(),
            customer: o.customer.clone(),
            total: money(o.total_cents),
            total_cents: o.total_cents,
            status: o.status.clone(),
            gift: o.gift,
            lines: o.lines.clone(),
            notes: o.notes.clone(),
            attachments: o.attachments.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Export {
    pub started: Instant,
    pub rows: usize,
    /// Status requests answered so far.
    pub polls: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportStatus {
    Running,
    Ready { rows: usize },
}

/// All mutable state of the shop.
#[derive(Debug)]
pub struct Shop {
    orders: BTreeMap<u32, Order>,
    next_order_id: u32,
    exports: BTreeMap<u32, Export>,
    next_export_id: u32,
}

fn seed_order(id: u32, customer: &str, product: Product, quantity: u32, status: &str) -> Order {
    Order {
        id,
        customer: customer.to_owned(),
        lines: vec![Line { product: product.name.to_owned(), quantity, unit_price_cents: product.price_cents }],
        total_cents: product.price_cents * i64::from(quantity),
        status: status.to_owned(),
        gift: false,
        notes: Vec::new(),
        attachments: Vec::new(),
    }
}

impl Shop {
    /// The seed data every scenario starts from.
    pub fn seeded() -> Shop {
        let [tea, mugs, saffron] = [PRODUCTS[0], PRODUCTS[1], PRODUCTS[2]];
        let orders = [
            seed_order(1001, "Ada Lovelace", tea, 2, "Paid"),
            seed_order(1002, "Ada Lovelace", saffron, 1, "Pending"),
            seed_order(1003, "Grace Hopper", mugs, 3, "Paid"),
            seed_order(1004, "Alan Turing", tea, 1, "Shipped"),
        ];
        Shop {
            orders: orders.into_iter().map(|o| (o.id, o)).collect(),
            next_order_id: 1005,
            exports: BTreeMap::new(),
            next_export_id: 1,
        }
    }

    /// Orders whose customer contains `query`, ignoring case; all of them for a blank query.
    pub fn search(&self, query: &str) -> Vec<&Order> {
        let needle = query.trim().to_lowercase();
        self.orders.values().filter(|o| needle.is_empty() || o.customer.to_lowercase().contains(&needle)).collect()
    }

    pub fn order(&self, id: u32) -> Option<&Order> {
        self.orders.get(&id)
    }

    /// Builds the next order and hands out its id. Whether it is then stored is the caller's
    /// decision (`Defect::SaveFails` answers as if it were, and does not store it).
    pub fn new_order(
        &mut self,
        customer: &str,
        product: Product,
        quantity: u32,
        gift: bool,
        total_cents: i64,
    ) -> Order {
        let id = self.next_order_id;
        self.next_order_id += 1;
        Order {
            id,
            customer: customer.to_owned(),
            lines: vec![Line { product: product.name.to_owned(), quantity, unit_price_cents: product.price_cents }],
            total_cents,
            status: "Pending".to_owned(),
            gift,
            notes: Vec::new(),
            attachments: Vec::new(),
        }
    }

    pub fn store(&mut self, order: Order) {
        self.orders.insert(order.id, order);
    }

    pub fn delete(&mut self, id: u32) -> Option<Order> {
        self.orders.remove(&id)
    }

    /// Appends a note; `None` when the order does not exist.
    pub fn add_note(&mut self, id: u32, text: &str) -> Option<&Order> {
        let order = self.orders.get_mut(&id)?;
        order.notes.push(text.to_owned());
        Some(order)
    }

    /// Attaches a file; `None` when the order does not exist.
    pub fn attach(&mut self, id: u32, name: &str, size: usize) -> Option<&Order> {
        let order = self.orders.get_mut(&id)?;
        order.attachments.push(Attachment { name: name.to_owned(), size });
        Some(order)
    }

    /// Starts an export of all current orders and returns its id.
    pub fn start_export(&mut self, now: Instant) -> u32 {
        let id = self.next_export_id;
        self.next_export_id += 1;
        self.exports.insert(id, Export { started: now, rows: self.orders.len(), polls: 0 });
        id
    }

    /// The job's status as of `now`; the job is "done" once `EXPORT_DURATION` has passed, so
    /// no background task is needed and a paused test clock cannot leave one half-finished.
    /// The first status request always finds it running, however late it comes: a page must
    /// poll at least twice, even on a machine slow enough to ask only after the duration.
    /// Whether the export's file may be fetched: its status was answered READY (the page asks
    /// for the file after that), without counting as a status request.
    pub fn export_ready(&self, id: u32, now: Instant) -> Option<bool> {
        let export = self.exports.get(&id)?;
        Some(export.polls > 1 && now.saturating_duration_since(export.started) >= EXPORT_DURATION)
    }

    pub fn export_status(&mut self, id: u32, now: Instant) -> Option<ExportStatus> {
        let export = self.exports.get_mut(&id)?;
        export.polls += 1;
        if export.polls > 1 && now.saturating_duration_since(export.started) >= EXPORT_DURATION {
            Some(ExportStatus::Ready { rows: export.rows })
        } else {
            Some(ExportStatus::Running)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_has_two_decimals_and_a_euro_sign() {
        assert_eq!(money(1200), "€12.00");
        assert_eq!(money(450), "€4.50");
        assert_eq!(money(5), "€0.05");
        assert_eq!(money(0), "€0.00");
        assert_eq!(money(-100), "-€1.00");
    }

    #[test]
    fn seed_data_matches_the_contract() {
        let shop = Shop::seeded();
        let rows: Vec<_> = shop
            .search("")
            .iter()
            .map(|o| (o.number(), o.customer.clone(), money(o.total_cents), o.status.clone()))
            .collect();
        let expect = [
            ("#1001", "Ada Lovelace", "€9.00", "Paid"),
            ("#1002", "Ada Lovelace", "€12.00", "Pending"),
            ("#1003", "Grace Hopper", "€21.00", "Paid"),
            ("#1004", "Alan Turing", "€4.50", "Shipped"),
        ];
        let expect: Vec<_> =
            expect.iter().map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string())).collect();
        assert_eq!(rows, expect);
    }

    #[test]
    fn search_ignores_case_and_surrounding_space() {
        let shop = Shop::seeded();
        assert_eq!(shop.search(" ada ").len(), 2);
        assert_eq!(shop.search("HOPPER").len(), 1);
        assert_eq!(shop.search("nobody").len(), 0);
    }

    #[test]
    fn export_is_running_until_its_duration_has_passed() {
        let mut shop = Shop::seeded();
        let t0 = Instant::now();
        let id = shop.start_export(t0);
        // The first request finds it running even after the duration.
        assert_eq!(shop.export_status(id, t0 + EXPORT_DURATION), Some(ExportStatus::Running));
        assert_eq!(shop.export_status(id, t0), Some(ExportStatus::Running));
        assert_eq!(shop.export_status(id, t0 + EXPORT_DURATION), Some(ExportStatus::Ready { rows: 4 }));
        assert_eq!(shop.export_status(id + 1, t0), None);
    }

    #[test]
    fn products_are_found_ignoring_case() {
        assert_eq!(product("saffron").map(|p| p.price_cents), Some(1200));
        assert_eq!(product("Coffee"), None);
    }
}
