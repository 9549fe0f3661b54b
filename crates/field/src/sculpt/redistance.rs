//! Redistancing (filled in by the sculpting work).
