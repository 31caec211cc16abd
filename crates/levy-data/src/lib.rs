//! levy-data (being written).
