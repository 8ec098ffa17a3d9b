//! A verilated compiled loop or program driven by its host ([`weft_ip::app::host::Host`]):
//! ports by name, values of any width.

use num_bigint::BigUint;
use weft_ip::app::host::LoopPorts;

use super::Model;

impl LoopPorts for Model {
    fn set(&mut self, port: &str, value: &BigUint) {
        let p = self.port(port).unwrap_or_else(|e| panic!("{e}"));
        self.set_words(p, &value.to_u32_digits());
    }
    fn get(&mut self, port: &str) -> BigUint {
        self.eval();
        let p = self.port(port).unwrap_or_else(|e| panic!("{e}"));
        BigUint::from_slice(self.get_words(p))
    }
    fn edge(&mut self) {
        self.tick();
    }
}
