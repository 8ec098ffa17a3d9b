use weft_hdl::stream::Beat;
use weft_hdl::testbench::*;
use weft_ip::kernels::*;
fn main() {
    let mut rng = Rng::new(0x5EED);
    let vectors = reduce_vectors(&mut rng, 600);
    let mut inputs = vec![];
    for v in &vectors {
        for (i, beat) in v.iter().enumerate() {
            inputs.push((lanes_to_data(beat), i + 1 == v.len()));
        }
    }
    let judge = |i: usize, beat: &Beat| {
        reduce_error(
            &vectors[i],
            beat.data.to_u64_digits().first().copied().unwrap_or(0) as u32,
        )
    };
    let ports = TransformPorts {
        clk: |b: &mut ReduceF32x4| &mut b.clk,
        rst: |b| &mut b.rst,
        input: |b| &mut b.s_axis,
        output: |b| &mut b.m_axis,
    };
    for st in 1..=5 {
        for (valid, ready) in [(100, 100), (70, 100), (100, 60)] {
            let net = reduce::netlist(st).unwrap();
            let r = check_stream_outputs(
                ReduceF32x4::new(net),
                &ports,
                &inputs,
                vectors.len(),
                &judge,
                valid,
                ready,
                3,
            );
            println!(
                "stages {st} valid {valid} ready {ready}: {:?}",
                r.map(|r| r.cycles)
            );
        }
    }
}
