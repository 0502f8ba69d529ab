pub mod check;
pub mod messages;
