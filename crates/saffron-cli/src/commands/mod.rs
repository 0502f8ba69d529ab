pub mod check;
pub mod init;
pub mod mcp;
pub mod messages;
pub mod run;
pub mod skeleton;
pub mod status;
pub mod steps;
