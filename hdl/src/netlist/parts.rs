//! Small parts every block uses, written once: the round-robin arbiter, event counters and a
//! queue whose storage is block-RAM mappable.

use super::signal::{Design, Sig};

/// A queue made by [`Design::queue`].
pub struct Queue<'d> {
    /// The head is valid.
    pub valid: Sig<'d>,
    /// The head's fields (registers).
    pub head: Vec<Sig<'d>>,
    /// The memory has room for one more entry (entries in the head and prefetch registers
    /// are beyond its depth).
    pub space: Sig<'d>,
}

impl Design {
    /// Round-robin arbiter over `requests` (bit i = requester i): grants (one-hot) the first
    /// request at or above the pointer, wrapping, and when `advance` is high moves the pointer
    /// just past the grant. A requester is served within `n` advances. After reset the pointer
    /// is at requester 0. Two requesters give the "prefer the other after a grant" rule.
    pub fn round_robin<'d>(&'d self, name: &str, requests: Sig<'d>, advance: Sig<'d>) -> Sig<'d> {
        let n = requests.width;
        let mask = self.reg(name, n, u128::MAX);
        let masked = requests & mask.q;
        let pool = masked.any().mux(masked, requests);
        // The lowest set bit of the pool.
        let grant = (pool & (self.lit(0, n) - pool)).named(&format!("{name}_grant"));
        let upto = grant | (grant - 1u32);
        mask.next_when(advance & grant.any(), !upto);
        grant
    }

    /// A 32-bit counter of the cycles `event` is high, as output `name`.
    pub fn counter<'d>(&'d self, name: &str, event: Sig<'d>) -> Sig<'d> {
        let r = self.reg(name, 32, 0);
        r.next_when(event, r.q + 1u32);
        self.output(name, r.q);
        r.q
    }

    /// A 32-bit counter that adds, each cycle, how many of `events` are high, as output `name`.
    pub fn tally<'d>(&'d self, name: &str, events: &[Sig<'d>]) -> Sig<'d> {
        let r = self.reg(name, 32, 0);
        let sum = events.iter().fold(r.q, |total, e| total + e.zext(32));
        r.next(sum);
        self.output(name, r.q);
        r.q
    }

    /// A first-in first-out queue of `fields` (pushed together when `push` is high) whose head
    /// is held in registers, so its readers see no memory in their paths, and whose memory of
    /// `depth` entries is read through a registered port (block-RAM mappable). Two registers
    /// (the head and the one behind it) take entries straight from `push` while the memory is
    /// empty, so an entry pushed into an empty queue is the head at the next cycle and a
    /// stalled head costs no bubble; otherwise entries go through the memory, one read per cycle,
    /// so pops can follow at every cycle. `pop` takes the head (only while `valid`). Holds
    /// `depth + 2` entries (the memory and the two registers: a word in the read register always
    /// has a register to land in); `depth` a power of two.
    pub fn queue<'d>(&'d self, name: &str, depth: usize, push: Sig<'d>, fields: &[Sig<'d>], pop: Sig<'d>) -> Queue<'d> {
        assert!(depth.is_power_of_two(), "queue {name}: depth {depth} is not a power of two");
        let ab = depth.trailing_zeros() as usize;
        let wr = self.reg(&format!("{name}_wr"), ab + 1, 0);
        let rd = self.reg(&format!("{name}_rd"), ab + 1, 0);
        // A word read from the memory lands in its read register this cycle.
        let landed = self.reg(&format!("{name}_landed"), 1, 0);
        let head_valid = self.reg(&format!("{name}_valid"), 1, 0);
        let second_valid = self.reg(&format!("{name}_second_valid"), 1, 0);
        let stored = wr.q.ne(rd.q);
        // Registers in use after this cycle's pop: 0, 1 or 2 (head and second).
        let kept_two = second_valid.q & !pop;
        let kept_one = head_valid.q & !pop | second_valid.q & pop;
        // A push skips the memory while the memory is empty and the registers have room for
        // it behind a word landing now.
        let direct = push & !stored & !kept_two & !(landed.q & kept_one);
        let arriving = direct | landed.q;
        let both = landed.q & direct;
        // Read only when the word will find a free register the cycle it lands.
        let fetch = stored & !(kept_two | kept_one & arriving | both);
        let to_head = arriving & !kept_one;
        let to_second = arriving & kept_one | both;
        let mut head = vec![];
        for (k, field) in fields.iter().enumerate() {
            let mem = self.memory(&format!("{name}_mem{k}"), field.width, depth);
            mem.write(push & !direct, wr.q.bits(0, ab), *field);
            let read = mem.read_registered(fetch, rd.q.bits(0, ab), &format!("{name}_read{k}"));
            // The head takes the landing word before a pushed one; the second register takes
            // the landing word only behind a kept head.
            let second = self.later(field.width);
            let (h_next, h_load) = ((second_valid.q & pop).mux(second, landed.q.mux(read, *field)), second_valid.q & pop | to_head);
            let s_next = (landed.q & kept_one).mux(read, *field);
            let h = self.net().reg(h_next.wire, Some(h_load.wire), None);
            let s = self.net().reg(s_next.wire, Some(to_second.wire), None);
            second.define(self.sig(s).named(&format!("{name}_second{k}")));
            head.push(self.sig(h).named(&format!("{name}_head{k}")));
        }
        wr.next_when(push & !direct, wr.q + 1u32);
        rd.next_when(fetch, rd.q + 1u32);
        landed.next(fetch);
        head_valid.next(kept_one | arriving);
        second_valid.next(kept_two | kept_one & arriving | both);
        let space = (wr.q - rd.q).lt(depth as u128);
        Queue { valid: head_valid.q, head, space }
    }
}
