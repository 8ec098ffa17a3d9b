//! Link sessions: how the two ends of a link agree to start again when one of them restarts
//! (reset, reconfigured, power-cycled) while the other keeps running. The logic lives with the
//! state it resets (ingress, receive, control, transmit); this is the protocol in one place.
//!
//! Without it a restarted end would expect sequence number 0 while its partner sends 37, both
//! would hold credit counts of the old session, and the link would never carry a frame again.
//!
//! **Marks.** After reset an end is *fresh*: its training blocks (idle and not-ready idles,
//! byte 2) carry the restart mark (bit 0). An end echoes the mark (bit 1) in its own training
//! blocks while the partner's last block was marked. A fresh end stops marking when it sees the
//! echo, so a mark always reaches the partner before any frame of the new session; two ends that
//! start together release each other the same way. A fresh end's channel is not up, and a marked
//! block clears the partner's view of remote readiness, so no frame moves while marks do.
//!
//! **Hold.** While an end is fresh or its partner marks (`hold`), it drops the old session:
//! - transmit: frames written and not acknowledged are dropped (counted in `frames_dropped`),
//!   the rest of a user packet cut in the middle is taken and discarded, no new beat enters;
//!   sequence numbers, acknowledgements, the go-back state and link credits (the partner's limit
//!   comes with its first acknowledgement) start from zero;
//! - receive: the expected sequence number and the frame being received start again; frames
//!   already released to the consumer stay; the advertised limit becomes the buffer's free
//!   space;
//! - credits of the consumer behind the partner (`tx_credit`): every flit taken from the user
//!   and not yet credited is refunded, one pulse per cycle, and so is every discarded beat — the
//!   partner's buffers restarted empty; its freed totals count from zero again;
//! - credits of the consumer behind this end (`rx_credit_return`): flits of the old session
//!   still in the consumer or in this end's buffer are absorbed as they are freed (not reported
//!   to the partner, which restarted with full credits), and words of the new session wait in
//!   the buffer until every old flit has been freed, so the consumer never holds more than the
//!   partner's credits allow.
//!
//! A packet is never split: the node sends packets of at most `max_frame_words` words (one
//! frame each), and a frame is released only whole.
//!
//! Counted: `partner_restarts` (marks that began while this side was running) and
//! `frames_dropped`. What the restarted end held in its own buffers is lost with its state;
//! nothing outside it can count that exactly.
