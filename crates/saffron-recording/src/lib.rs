//! Recordings and proposals (see the crate description).
