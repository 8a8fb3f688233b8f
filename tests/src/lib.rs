//! Shared helpers for engram's black-box tests: a naive reference model of the memory graph that
//! the engine is compared against, and seeded fixtures.

pub mod reference;
