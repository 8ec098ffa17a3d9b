//! One node's collective unit in the built-in simulator, its network and its host played by the
//! bench: a partial that arrives before its contribution must not hold up the butterfly.
//!
//! The node (0, 0, 0) of a 4×2×1 torus runs a short allreduce on the butterfly, then a long one on
//! the chain. Its host blocks, as an MPI program does: it sends the long operation's contribution
//! only once the short one's result is in. The upstream neighbour, faster, has already sent its
//! partial of the long operation, and it reaches port `a` before the butterfly partners'
//! exchanges. A unit whose port `a` waited for that partial's contribution would hang here; the
//! unit must deliver the short result (checked against the butterfly's order), then join the
//! partial with the contribution (checked against the chain's order), and grant its beats back.

use weft_hdl::netlist::eval::Evaluator;
use weft_hdl::testbench::Rng;
use weft_ip::router::header::{with_ecc, Header};
use weft_ip::router::RouterConfig;
use weft_ip::system::allreduce::butterfly::EXCHANGE_TAG;
use weft_ip::system::allreduce::unit::unit;
use weft_ip::system::allreduce::{ElementType, ReduceOp, FLAGS, GRANT_TAG, PARTIAL_TAG};

const PORT_A: usize = 2;

fn pack(c: [usize; 3], port: usize) -> u128 {
    (c[0] | c[1] << 6 | c[2] << 12 | port << 18) as u128
}

fn flag(name: &str) -> u128 {
    1 << FLAGS.iter().position(|f| *f == name).unwrap()
}

/// A packet as the router delivers it: header (from `src` to node 0's port a), then the
/// elements four to a beat.
fn packet(src: [usize; 3], tag: u16, id: u32, elements: &[u32]) -> Vec<(u128, bool)> {
    let h = Header { dst: [0, 0, 0], dst_port: PORT_A, src, src_port: PORT_A, length: 4 * elements.len(), tag, user: id, ..Default::default() };
    let mut beats = vec![(with_ecc(h.pack()), elements.is_empty())];
    let chunks: Vec<&[u32]> = elements.chunks(4).collect();
    for (i, c) in chunks.iter().enumerate() {
        beats.push((c.iter().enumerate().fold(0u128, |acc, (j, w)| acc | (*w as u128) << (32 * j)), i + 1 == chunks.len()));
    }
    beats
}

/// A host's contribution: a header the unit reads `length` and the operation id from.
fn contribution(id: u32, elements: &[u32]) -> Vec<(u128, bool)> {
    let mut beats = packet([0, 0, 0], 0, id, elements);
    beats[0].0 = Header { length: 4 * elements.len(), user: id, ..Default::default() }.pack();
    beats
}

#[test]
fn an_early_partial_does_not_hold_up_the_butterfly() {
    let ty = ElementType::F32;
    let sum = |x: u32, y: u32| ReduceOp::Sum.apply(ty, x as u128, y as u128) as u32;
    let mut rng = Rng::new(41);
    let mut value = || (rng.below(2000) as f32 / 8.0 - 125.0).to_bits();
    let mut e = Evaluator::new(unit(&RouterConfig::default(), ty).unwrap());
    e.reset(2);
    let dst_a = pack([1, 0, 0], PORT_A);
    let dst_b = pack([0, 1, 0], PORT_A + 1);
    for (name, v) in [("flags", flag("use_a") | flag("fwd_b")), ("dst_a", dst_a), ("dst_b", dst_b), ("host_dst", pack([0, 0, 0], PORT_A)), ("small_bytes", 256), ("op", 0), ("timeout", 0)] {
        e.set_input(name, v);
    }
    // The short operation (id 7): one element; the partners' vectors at steps X bit 0, X bit 1, Y.
    let own = value();
    let partners = [[1, 0, 0], [2, 0, 0], [0, 1, 0]];
    let exchanged: Vec<u32> = partners.iter().map(|_| value()).collect();
    let short = exchanged.iter().fold(own, |h, a| sum(*a, h));
    // The long operation (id 8): 128 elements, longer than small_bytes, so it runs on the chain.
    let long_own: Vec<u32> = (0..128).map(|_| value()).collect();
    let partial: Vec<u32> = (0..128).map(|_| value()).collect();
    let long: Vec<u32> = partial.iter().zip(&long_own).map(|(a, h)| sum(sum(*a, *h), ReduceOp::Sum.identity(ty) as u32)).collect();

    // Port a: the neighbour's partial first, then the partners' exchanges.
    let mut net: Vec<(u128, bool)> = packet([0, 1, 0], PARTIAL_TAG, 8, &partial);
    for (p, v) in partners.iter().zip(&exchanged) {
        net.extend(packet(*p, EXCHANGE_TAG, 7, &[*v]));
    }
    let mut host: Vec<(u128, bool)> = contribution(7, &[own]);
    let (mut at_net, mut at_host) = (0, 0);
    let (mut results, mut out_a): (Vec<u128>, Vec<Vec<u128>>) = (vec![], vec![vec![]]);
    let mut short_done = None;
    for cycle in 0..4000 {
        for (name, beats, at) in [("s_axis_a", &net, at_net), ("s_axis_host", &host, at_host)] {
            let beat = beats.get(at).copied();
            e.set_input(&format!("{name}_tvalid"), beat.is_some() as u128);
            e.set_input(&format!("{name}_tdata"), beat.map_or(0, |b| b.0));
            e.set_input(&format!("{name}_tlast"), beat.is_some_and(|b| b.1) as u128);
        }
        e.set_input("s_axis_a_tkeep", 0xFFFF);
        e.set_input("s_axis_b_tvalid", 0);
        for out in ["m_axis_a", "m_axis_b", "m_axis_host"] {
            e.set_input(&format!("{out}_tready"), 1);
        }
        e.settle();
        at_net += (at_net < net.len() && e.get_output("s_axis_a_tready") == 1) as usize;
        at_host += (at_host < host.len() && e.get_output("s_axis_host_tready") == 1) as usize;
        assert_eq!(e.get_output("m_axis_b_tvalid"), 0, "no result arrives, so none leaves on port b");
        if e.get_output("m_axis_host_tvalid") == 1 {
            results.push(e.get_output("m_axis_host_tdata"));
            // The blocking host: the long contribution once the short result is in.
            if e.get_output("m_axis_host_tlast") == 1 && short_done.is_none() {
                short_done = Some(cycle);
                host.extend(contribution(8, &long_own));
            }
        }
        if e.get_output("m_axis_a_tvalid") == 1 {
            out_a.last_mut().unwrap().push(e.get_output("m_axis_a_tdata"));
            if e.get_output("m_axis_a_tlast") == 1 {
                out_a.push(vec![]);
            }
        }
        e.clock(false);
    }
    let done = short_done.expect("the short allreduce's result never reached the host: its exchanges waited behind the partial");
    assert_eq!(results.len(), 2, "one result packet of one beat and its header");
    assert_eq!(results[1] as u32, short, "the butterfly's result, partner ∘ own at each step");
    out_a.pop();
    let tags: Vec<u16> = out_a.iter().map(|p| Header::unpack(p[0]).tag).collect();
    assert_eq!(tags.iter().filter(|t| **t & !1 == EXCHANGE_TAG).count(), 3, "three exchanges sent: {tags:x?}");
    let partial_out = out_a.iter().find(|p| Header::unpack(p[0]).tag == PARTIAL_TAG).expect("the long operation's partial leaves toward the root");
    let h = Header::unpack(partial_out[0]);
    assert_eq!((pack(h.dst, h.dst_port), h.length, h.user), (dst_a, 512, 8));
    let got: Vec<u32> = partial_out[1..].iter().flat_map(|w| (0..4).map(move |j| (w >> (32 * j)) as u32)).collect();
    assert_eq!(got, long, "(a ∘ h) ∘ identity per element");
    let grant = out_a.iter().find(|p| Header::unpack(p[0]).tag == GRANT_TAG).expect("the partial's beats are granted back");
    let g = Header::unpack(grant[0]);
    assert_eq!((pack(g.dst, g.dst_port), g.length, grant.len()), (pack([0, 1, 0], PORT_A), 0, 1), "a header-only grant to the sender's port a");
    assert_eq!(g.user, 1 + 512 / 16, "it frees the partial's beats, header included");
    println!("short result after {done} cycles; the partial joined, forwarded and granted");
}
