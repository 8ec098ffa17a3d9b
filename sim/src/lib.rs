pub use weft_ip;
