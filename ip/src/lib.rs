pub use weft_hdl;
