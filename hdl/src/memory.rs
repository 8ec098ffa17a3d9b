//! Simple dual-port RAM, one clock: the storage behind FIFOs and buffers.

use rust_hdl::core::timing::TimingInfo;
use rust_hdl::prelude::*;

/// `2^A` words of `D`, one write port and one registered read port (the read register holds
/// its value while `read_enable` is low), so vendor tools map it to block RAM or LUT RAM.
/// Reading the address being written in the same cycle returns the old word.
#[derive(LogicBlock, Default)]
pub struct DualPortRam<D: Synth, const A: usize> {
    pub clk: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_enable: Signal<In, Bit>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, D>,
    _words: Vec<D>,
}

impl<D: Synth, const A: usize> Logic for DualPortRam<D, A> {
    fn update(&mut self) {
        if self.clk.pos_edge() {
            if self._words.is_empty() {
                self._words = vec![D::default(); 1 << A];
            }
            if self.read_enable.val() {
                self.read_data.next = self._words[self.read_address.val().index()];
            }
            if self.write_enable.val() {
                self._words[self.write_address.val().index()] = self.write_data.val();
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        ram_verilog(D::BITS, A, "clk", "clk")
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "ram".into(),
            clock: "clk".into(),
            inputs: vec!["write_enable".into(), "write_address".into(), "write_data".into(), "read_enable".into(), "read_address".into()],
            outputs: vec!["read_data".into()],
        }]
    }
}

/// `2^A` words of `D` written on `write_clk` and read through a register on `read_clk` (the
/// read register holds while `read_enable` is low): the storage of clock-domain-crossing FIFOs.
/// A word is read only after its write is known on the read side, so the two ports never touch
/// one address in the same instant.
#[derive(LogicBlock, Default)]
pub struct TwoClockRam<D: Synth, const A: usize> {
    pub write_clk: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_clk: Signal<In, Clock>,
    pub read_enable: Signal<In, Bit>,
    pub read_address: Signal<In, Bits<A>>,
    pub read_data: Signal<Out, D>,
    _words: Vec<D>,
}

impl<D: Synth, const A: usize> Logic for TwoClockRam<D, A> {
    fn update(&mut self) {
        if self._words.is_empty() {
            self._words = vec![D::default(); 1 << A];
        }
        if self.read_clk.pos_edge() && self.read_enable.val() {
            self.read_data.next = self._words[self.read_address.val().index()];
        }
        if self.write_clk.pos_edge() && self.write_enable.val() {
            self._words[self.write_address.val().index()] = self.write_data.val();
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        ram_verilog(D::BITS, A, "write_clk", "read_clk")
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![
            TimingInfo { name: "ram_write".into(), clock: "write_clk".into(), inputs: vec!["write_enable".into(), "write_address".into(), "write_data".into()], outputs: vec![] },
            TimingInfo { name: "ram_read".into(), clock: "read_clk".into(), inputs: vec!["read_enable".into(), "read_address".into()], outputs: vec!["read_data".into()] },
        ]
    }
}

/// A RAM with a registered read port: `bits`-bit words, `2^address_bits` of them, written on
/// `write_clk` and read on `read_clk` (the same name for one clock). Both vendors' RAM-style
/// attributes: Vivado reads `ram_style`, Quartus `ramstyle`.
fn ram_verilog(bits: usize, address_bits: usize, write_clk: &str, read_clk: &str) -> Verilog {
    let (msb, last) = (bits - 1, (1usize << address_bits) - 1);
    let write = "    if (write_enable) begin\n        mem[write_address] <= write_data;\n    end\n";
    let read = "    if (read_enable) begin\n        read_data <= mem[read_address];\n    end\n";
    let blocks = if write_clk == read_clk {
        format!("always @(posedge {write_clk}) begin\n{write}{read}end")
    } else {
        format!("always @(posedge {write_clk}) begin\n{write}end\n\nalways @(posedge {read_clk}) begin\n{read}end")
    };
    Verilog::Custom(format!("(* ram_style = \"auto\", ramstyle = \"auto\" *)\nreg [{msb}:0] mem [0:{last}];\n\n{blocks}"))
}
