//! RESP: the request decoder and the reply encoder.

pub mod client;
pub mod decode;
pub mod encode;
pub mod json;

pub use decode::{Decoder, ProtocolError};
pub use encode::Reply;
