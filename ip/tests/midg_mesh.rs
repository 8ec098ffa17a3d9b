//! MIDG2's meshes and element geometry against independent references: counts of Kuhn's
//! subdivision, the cube's volume and surface, neighbour symmetry, face nodes matched by their
//! coordinates, normals against the faces' vertices, physical derivatives of polynomials
//! against their derivatives by hand, and the readers against the generator's own mesh written
//! out in each format.

use weft_ip::midg::readers::{gambit, gmsh};
use weft_ip::midg::{Geometry, Operators, TetMesh};

const FACE_VERTICES: [[usize; 3]; 4] = [[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 2, 3]];

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[test]
fn the_unit_cube_is_cut_into_conforming_tetrahedra() {
    for n in [1, 2, 3] {
        let mesh = TetMesh::unit_cube(n).unwrap();
        assert_eq!(mesh.elements.len(), 6 * n * n * n);
        assert_eq!(mesh.vertices.len(), (n + 1).pow(3));
        let volume: f64 = (0..mesh.elements.len()).map(|k| mesh.volume(k)).sum();
        assert!(mesh.elements.iter().enumerate().all(|(k, _)| mesh.volume(k) > 0.0), "a negatively oriented element");
        assert!((volume - 1.0).abs() < 1e-13, "n = {n}: volume {volume}");
        let conn = mesh.connect().unwrap();
        let mut boundary = 0;
        for k in 0..mesh.elements.len() {
            for f in 0..4 {
                let (e, g) = (conn.etoe[k][f] as usize, conn.etof[k][f] as usize);
                if conn.boundary(k, f) {
                    boundary += 1;
                    // Every vertex of a boundary face on one wall of the cube.
                    let v: Vec<[f64; 3]> = FACE_VERTICES[f].iter().map(|&i| mesh.vertices[mesh.elements[k][i] as usize]).collect();
                    assert!((0..3).any(|d| v.iter().all(|p| p[d] == 0.0) || v.iter().all(|p| p[d] == 1.0)), "element {k}, face {f}: inside the cube but unmatched");
                } else {
                    assert_eq!((conn.etoe[e][g] as usize, conn.etof[e][g] as usize), (k, f), "neighbours disagree");
                    let mut a: Vec<u32> = FACE_VERTICES[f].iter().map(|&i| mesh.elements[k][i]).collect();
                    let mut b: Vec<u32> = FACE_VERTICES[g].iter().map(|&i| mesh.elements[e][i]).collect();
                    a.sort_unstable();
                    b.sort_unstable();
                    assert_eq!(a, b, "element {k}, face {f}: not the same vertices across");
                }
            }
        }
        // Six walls of n² squares, two triangles each.
        assert_eq!(boundary, 12 * n * n);
    }
}

#[test]
fn geometry_matches_the_elements_and_the_face_maps_match_points() {
    let mesh = TetMesh::unit_cube(2).unwrap();
    let conn = mesh.connect().unwrap();
    for n in 1..=4 {
        let op = Operators::new(n);
        let g = Geometry::new(&mesh, &conn, &op).unwrap();
        let (np, nfp) = (op.np(), op.nfp());
        let mut area = 0.0;
        for k in 0..mesh.elements.len() {
            let v = mesh.corners(k);
            assert!((4.0 / 3.0 * g.j[k] - mesh.volume(k)).abs() < 1e-15, "J and the volume");
            let centre = [0, 1, 2].map(|d| v.iter().map(|p| p[d]).sum::<f64>() / 4.0);
            for f in 0..4 {
                let [a, b, c] = FACE_VERTICES[f].map(|i| v[i]);
                let normal = cross(sub(b, a), sub(c, a));
                let len = dot(normal, normal).sqrt();
                let mut outward = normal.map(|x| x / len);
                if dot(outward, sub(a, centre)) < 0.0 {
                    outward = outward.map(|x| -x);
                }
                let n_k = g.normal[4 * k + f];
                assert!((0..3).all(|d| (n_k[d] - outward[d]).abs() < 1e-13), "element {k}, face {f}: normal {n_k:?}, from the vertices {outward:?}");
                assert!((2.0 * g.sj[4 * k + f] - len / 2.0).abs() < 1e-14, "element {k}, face {f}: 2·sJ against the face's area");
                assert!((g.fscale[4 * k + f] - g.sj[4 * k + f] / g.j[k]).abs() < 1e-12);
                if conn.boundary(k, f) {
                    area += len / 2.0;
                }
            }
        }
        assert!((area - 6.0).abs() < 1e-12, "order {n}: boundary area {area}");
        assert_eq!(g.vmap_m.len(), mesh.elements.len() * 4 * nfp);
        for (i, (&m, &p)) in g.vmap_m.iter().zip(&g.vmap_p).enumerate() {
            let (m, p) = (m as usize, p as usize);
            assert!((g.x[m] - g.x[p]).abs() + (g.y[m] - g.y[p]).abs() + (g.z[m] - g.z[p]).abs() < 1e-12, "face node {i}: vmapP is elsewhere");
            if m != p {
                assert_ne!(m / np, p / np, "face node {i}: vmapP in the same element");
            }
        }
        // Boundary face nodes lie on the cube's walls, and only they map to themselves.
        let on_wall = |q: usize| [g.x[q], g.y[q], g.z[q]].iter().any(|c| c.abs() < 1e-12 || (c - 1.0).abs() < 1e-12);
        assert!(g.map_b.iter().all(|&i| on_wall(g.vmap_m[i as usize] as usize)));
        let fixed = g.vmap_m.iter().zip(&g.vmap_p).filter(|(a, b)| a == b).count();
        assert_eq!(fixed, g.map_b.len());
        assert_eq!(g.map_b.len(), 12 * 4 * nfp);
    }
}

#[test]
fn physical_derivatives_are_exact_on_polynomials_of_degree_n() {
    let mesh = TetMesh::unit_cube(2).unwrap();
    let conn = mesh.connect().unwrap();
    for n in 1..=4 {
        let op = Operators::new(n);
        let g = Geometry::new(&mesh, &conn, &op).unwrap();
        let np = op.np();
        // u = x^a y^b z^c with a + b + c = n.
        let m = n as i32;
        for (a, b, c) in [(m, 0, 0), (0, m, 0), (0, 0, m), (m - 1, 1, 0), (0, m - 1, 1), (1, 0, m - 1)] {
            let f = |x: f64, y: f64, z: f64| x.powi(a) * y.powi(b) * z.powi(c);
            let d = |e: i32, v: f64| if e == 0 { 0.0 } else { e as f64 * v.powi(e - 1) };
            for k in 0..mesh.elements.len() {
                let at = |i: usize| (g.x[k * np + i], g.y[k * np + i], g.z[k * np + i]);
                let u: Vec<f64> = (0..np)
                    .map(|i| {
                        let (x, y, z) = at(i);
                        f(x, y, z)
                    })
                    .collect();
                let grad = g.gradient(&op, k, &u);
                for i in 0..np {
                    let (x, y, z) = at(i);
                    let want = [d(a, x) * y.powi(b) * z.powi(c), x.powi(a) * d(b, y) * z.powi(c), x.powi(a) * y.powi(b) * d(c, z)];
                    for dim in 0..3 {
                        assert!((grad[dim][i] - want[dim]).abs() < 1e-9, "order {n}, x^{a} y^{b} z^{c}, element {k}, node {i}: {} against {}", grad[dim][i], want[dim]);
                    }
                }
            }
        }
    }
}

#[test]
fn the_readers_give_back_the_generated_mesh() {
    let mesh = TetMesh::unit_cube(2).unwrap();
    // Node numbers from 1, as both formats write them.
    let mut msh = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
    msh += &format!("{}\n", mesh.vertices.len());
    for (i, v) in mesh.vertices.iter().enumerate() {
        msh += &format!("{} {:e} {:e} {:e}\n", i + 1, v[0], v[1], v[2]);
    }
    msh += &format!("$EndNodes\n$Elements\n{}\n1 15 2 0 1 1\n", mesh.elements.len() + 1);
    for (k, e) in mesh.elements.iter().enumerate() {
        msh += &format!("{} 4 2 0 1 {} {} {} {}\n", k + 2, e[0] + 1, e[1] + 1, e[2] + 1, e[3] + 1);
    }
    msh += "$EndElements\n";
    assert_eq!(gmsh("cube.msh", &msh).unwrap(), mesh);

    let mut neu = String::from(
        "        CONTROL INFO 2.2.30\n** GAMBIT NEUTRAL FILE\ncube\nPROGRAM:                Gambit     VERSION:  2.2.30\n\n     NUMNP     NELEM     NGRPS    NBSETS     NDFCD     NDFVL\n",
    );
    neu += &format!("{:>10}{:>10}         1         0         3         3\nENDOFSECTION\n   NODAL COORDINATES 2.2.30\n", mesh.vertices.len(), mesh.elements.len());
    for (i, v) in mesh.vertices.iter().enumerate() {
        neu += &format!("{:>10}{:>20.11e}{:>20.11e}{:>20.11e}\n", i + 1, v[0], v[1], v[2]);
    }
    neu += "ENDOFSECTION\n      ELEMENTS/CELLS 2.2.30\n";
    for (k, e) in mesh.elements.iter().enumerate() {
        // Written with the last two vertices swapped: the reader restores the orientation.
        neu += &format!("{:>8} 6  4 {:>8}{:>8}{:>8}{:>8}\n", k + 1, e[0] + 1, e[1] + 1, e[3] + 1, e[2] + 1);
    }
    neu += "ENDOFSECTION\n";
    assert_eq!(gambit("cube.neu", &neu).unwrap(), mesh);

    // Bad input names the place.
    let err = gmsh("bad.msh", &msh.replace("2 4 2 0 1 1 2", "2 4 2 0 1 1 x")).unwrap_err().to_string();
    assert!(err.contains("bad.msh:") && err.contains("`x`"), "{err}");
    let err = gambit("bad.neu", &neu.replacen(" 6  4 ", " 5  3 ", 1)).unwrap_err().to_string();
    assert!(err.contains("only tetrahedra"), "{err}");
    let err = gmsh("v4.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n").unwrap_err().to_string();
    assert!(err.contains("msh2"), "{err}");
    assert!(TetMesh::unit_cube(0).is_err() && TetMesh::unit_cube(65).is_err());
}
