//! A virtual channel's buffer: the FIFO of [`Design::queue`] (head and the entry behind it in
//! registers, memory read through a registered port, so block-RAM mappable) with the same cycle
//! behaviour, but exposing what the router's allocator reads one cycle ahead (the entry behind
//! the head and a word landing from the memory) and keeping "the memory holds entries" in a
//! register rather than comparing the pointers in the cycle that needs it.

use weft_hdl::netlist::{Design, Sig};

/// A VC buffer made by [`vc_buffer`].
pub(super) struct Buffer<'d> {
    /// The head is valid; its fields (registers).
    pub valid: Sig<'d>,
    pub head: Vec<Sig<'d>>,
    /// The memory has room for one more entry, and for two.
    pub space: Sig<'d>,
    pub space2: Sig<'d>,
    /// The entry behind the head (registers) and whether it holds one.
    pub second_valid: Sig<'d>,
    pub second: Vec<Sig<'d>>,
    /// A word read from the memory lands this cycle, in `landing` (the read port's register);
    /// it moves into the head or second register at the end of the cycle.
    pub landed: Sig<'d>,
    pub landing: Vec<Sig<'d>>,
}

/// A FIFO of `fields` (pushed together when `push` is high), `depth` entries of memory (a power
/// of two) plus the head, second and read registers; `pop` takes the head (only while valid).
/// `rewrite` (load, value) replaces the head's first field while the head stays (no pop).
pub(super) fn vc_buffer<'d>(d: &'d Design, name: &str, depth: usize, push: Sig<'d>, fields: &[Sig<'d>], pop: Sig<'d>, rewrite: Option<(Sig<'d>, Sig<'d>)>) -> Buffer<'d> {
    assert!(depth.is_power_of_two(), "buffer {name}: depth {depth} is not a power of two");
    let ab = depth.trailing_zeros() as usize;
    let wr = d.reg(&format!("{name}_wr"), ab + 1, 0);
    let rd = d.reg(&format!("{name}_rd"), ab + 1, 0);
    // The memory holds entries (wr ≠ rd), registered.
    let stored = d.reg(&format!("{name}_stored"), 1, 0);
    // A word read from the memory lands in its read register this cycle.
    let landed = d.reg(&format!("{name}_landed"), 1, 0);
    let head_valid = d.reg(&format!("{name}_valid"), 1, 0);
    let second_valid = d.reg(&format!("{name}_second_valid"), 1, 0);
    // Registers in use after this cycle's pop: 0, 1 or 2 (head and second).
    let kept_two = second_valid.q & !pop;
    let kept_one = head_valid.q & !pop | second_valid.q & pop;
    // A push skips the memory while the memory is empty and the registers have room for it
    // behind a word landing now.
    let direct = push & !stored.q & !kept_two & !(landed.q & kept_one);
    let arriving = direct | landed.q;
    let both = landed.q & direct;
    // Read only when the word will find a free register the cycle it lands.
    let fetch = stored.q & !(kept_two | kept_one & arriving | both);
    let to_head = arriving & !kept_one;
    let to_second = arriving & kept_one | both;
    let (mut head, mut seconds, mut landing) = (vec![], vec![], vec![]);
    for (k, field) in fields.iter().enumerate() {
        let mem = d.memory(&format!("{name}_mem{k}"), field.width, depth);
        mem.write(push & !direct, wr.q.bits(0, ab), *field);
        let read = mem.read_registered(fetch, rd.q.bits(0, ab), &format!("{name}_read{k}"));
        // The head takes the landing word before a pushed one; the second register takes the
        // landing word only behind a kept head.
        let second = d.later(field.width);
        let (mut h_next, mut h_load) = ((second_valid.q & pop).mux(second, landed.q.mux(read, *field)), second_valid.q & pop | to_head);
        if let (0, Some((load, value))) = (k, rewrite) {
            (h_next, h_load) = (load.mux(value, h_next), h_load | load);
        }
        let s_next = (landed.q & kept_one).mux(read, *field);
        let h = d.net().reg(h_next.wire, Some(h_load.wire), None);
        let s = d.net().reg(s_next.wire, Some(to_second.wire), None);
        let s = d.sig(s).named(&format!("{name}_second{k}"));
        second.define(s);
        seconds.push(s);
        landing.push(read);
        head.push(d.sig(h).named(&format!("{name}_head{k}")));
    }
    let wr_next = wr.q + (push & !direct).zext(ab + 1);
    let rd_next = rd.q + fetch.zext(ab + 1);
    wr.next(wr_next);
    rd.next(rd_next);
    // Still holding entries: one was written, or more than one was there or none read.
    let mempush = push & !direct;
    let single = (wr.q - rd.q).eq(1u32);
    stored.next(mempush | stored.q & !(fetch & single));
    landed.next(fetch);
    head_valid.next(kept_one | arriving);
    second_valid.next(kept_two | kept_one & arriving | both);
    let used = wr.q - rd.q;
    Buffer { valid: head_valid.q, head, space: used.lt(depth as u128), space2: used.lt(depth as u128 - 1), second_valid: second_valid.q, second: seconds, landed: landed.q, landing }
}
