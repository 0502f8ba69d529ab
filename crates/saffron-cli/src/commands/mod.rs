pub mod check;
pub mod messages;
pub mod status;
pub mod steps;
