//! The allreduce engine in the built-in simulator: a small ring of nodes, each result bit-exact
//! to the software reference of the documented summation order.

use weft_sim::network::Torus;
use weft_sim::weft_ip::link::LinkConfig;
use weft_sim::weft_ip::router::RouterConfig;
use weft_sim::weft_ip::system::allreduce::{packet_sizes, reference};
use weft_sim::weft_ip::system::NodeConfig;
use weft_sim::weft_ip::weft_hdl::testbench::Rng;

fn vectors(rng: &mut Rng, nodes: usize, len: usize) -> Vec<Vec<f32>> {
    (0..nodes).map(|_| (0..len).map(|_| f32::from_bits(weft_sim::weft_ip::kernels::operand(rng))).collect()).collect()
}

#[test]
fn a_ring_of_three_sums_in_the_documented_order() {
    let config = NodeConfig {
        router: RouterConfig { dims: [3, 1, 1], vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() },
        link: LinkConfig::default(),
        kernels: vec![],
        allreduce: Some([0, 1]),
    };
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.program_allreduce([0, 1]).unwrap();
    let mut rng = Rng::new(7);
    for (len, pressure) in [(7, None), (70, Some(3))] {
        let v = vectors(&mut rng, 3, len);
        let want: Vec<u32> = reference(&config.router, &v).iter().map(|x| x.to_bits()).collect();
        // The order matters for these values: v0 + (v1 + v2) differs somewhere.
        let naive: Vec<u32> = (0..len).map(|k| (v[0][k] + (v[1][k] + v[2][k])).to_bits()).collect();
        assert!(len < 50 || naive != want, "{len} elements: the order is not visible in this data");
        let run = torus.allreduce(0, &v, &packet_sizes(4 * len, 64), pressure, 20_000).unwrap();
        for (n, got) in run.results.iter().enumerate() {
            assert_eq!(*got, want, "node {n}, {len} elements");
        }
        println!("{len} elements: {} cycles", run.cycles);
    }
}

/// At 256 bits (eight lanes a beat, four-lane links) the same sums come out.
#[test]
fn a_256_bit_ring_sums_in_the_documented_order() {
    let config = NodeConfig {
        router: RouterConfig { dims: [3, 1, 1], width: 256, vc_buffer_flits: 32, max_packet_bytes: 256, ..Default::default() },
        link: LinkConfig { lanes: 4, ..LinkConfig::default() },
        kernels: vec![],
        allreduce: Some([1, 0]),
    };
    let mut torus = Torus::netlist_nodes(&config, 12).unwrap();
    torus.reset();
    torus.bring_up(20_000).unwrap();
    torus.program_allreduce([1, 0]).unwrap();
    let mut rng = Rng::new(11);
    let v = vectors(&mut rng, 3, 61);
    let want: Vec<u32> = reference(&config.router, &v).iter().map(|x| x.to_bits()).collect();
    let run = torus.allreduce(1, &v, &packet_sizes(4 * 61, 96), Some(5), 20_000).unwrap();
    for (n, got) in run.results.iter().enumerate() {
        assert_eq!(*got, want, "node {n}");
    }
}
