//! bounded
