pub mod check;
pub mod init;
pub mod mcp;
pub mod messages;
pub mod report;
pub mod run;
pub mod status;
pub mod steps;
