//! A random unstructured graph as a mesh: a ring of `n` nodes plus random chords, a weight per
//! edge and a right-hand side per node — the mesh of `examples/apps/jacobi.app`.

use weft_hdl::testbench::Rng;

use super::MeshData;

/// Sets `nodes` and `edges`; map `ends` (edge → 2 nodes); data `w` (per edge, in [0.5, 1.5))
/// and `f` (per node, in [−1, 1]). The same `seed` gives the same graph.
pub fn graph(n: usize, chords: usize, seed: u64) -> MeshData {
    let mut rng = Rng::new(seed);
    let mut ends: Vec<[u32; 2]> = (0..n).map(|i| [i as u32, ((i + 1) % n) as u32]).collect();
    while ends.len() < n + chords && n > 1 {
        let (a, b) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
        if a != b {
            ends.push([a, b]);
        }
    }
    let w: Vec<f64> = (0..ends.len()).map(|_| 0.5 + rng.below(1000) as f64 / 1000.0).collect();
    let f: Vec<f64> = (0..n).map(|_| rng.below(2001) as f64 / 1000.0 - 1.0).collect();
    let mut mesh = MeshData::default();
    mesh.sets.insert("nodes".into(), n);
    mesh.sets.insert("edges".into(), ends.len());
    mesh.maps.insert("ends".into(), (2, ends.into_iter().flatten().collect()));
    mesh.dats.insert("w".into(), (1, w));
    mesh.dats.insert("f".into(), (1, f));
    mesh
}
