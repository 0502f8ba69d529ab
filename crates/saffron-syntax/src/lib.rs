//! Gherkin and the .saffron dialect.
